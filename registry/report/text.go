package report

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sipregistry/sip/registry"
)

// ANSI styles of the text format.
const (
	styleReset   = "\x1b[0m"
	styleBold    = "\x1b[1m"
	styleError   = "\x1b[1;31m"
	styleWarning = "\x1b[1;33m"
	styleGutter  = "\x1b[1;34m"
	styleHelp    = "\x1b[1;36m"
)

// writeText prints each problem as a line editors and grep understand
// (path:line:column: severity [rule] message), then, like rustc and eipw,
// the source line with a caret under the column, and the hint.
func writeText(w io.Writer, r Result) error {
	t := textWriter{color: r.Color, lines: map[string][]string{}}
	for _, p := range r.Problems {
		t.problem(p, r.Sources)
	}
	errs, warns := registry.Count(r.Problems)
	fmt.Fprintf(&t.b, "%s, %s, %s\n", plural(r.Files, "file"), plural(errs, "error"), plural(warns, "warning"))
	_, err := io.WriteString(w, t.b.String())
	return err
}

type textWriter struct {
	b     strings.Builder
	color bool
	lines map[string][]string // the split sources, by path
}

func (t *textWriter) style(style, s string) string {
	if !t.color {
		return s
	}
	return style + s + styleReset
}

func (t *textWriter) problem(p registry.Problem, sources map[string][]byte) {
	sev := styleError
	if p.Severity == registry.SeverityWarning {
		sev = styleWarning
	}
	fmt.Fprintf(&t.b, "%s:%d:%d: %s %s\n", p.Path, p.Line, p.Column, t.style(sev, string(p.Severity)+" ["+p.Rule+"]"), oneLine(p.Message))
	line, ok := t.sourceLine(p, sources)
	gutter := strings.Repeat(" ", len(strconv.Itoa(p.Line)))
	if ok {
		fmt.Fprintf(&t.b, " %s %s\n", gutter, t.style(styleGutter, "|"))
		fmt.Fprintf(&t.b, " %s %s %s\n", t.style(styleGutter, strconv.Itoa(p.Line)), t.style(styleGutter, "|"), line)
		caret := "^"
		if p.EndLine > p.Line {
			caret += fmt.Sprintf(" (to line %d)", p.EndLine)
		}
		fmt.Fprintf(&t.b, " %s %s %s%s\n", gutter, t.style(styleGutter, "|"), padTo(line, p.Column), t.style(sev, caret))
	}
	if p.Hint != "" {
		fmt.Fprintf(&t.b, " %s %s %s\n", gutter, t.style(styleHelp, "= help:"), oneLine(p.Hint))
	}
}

// sourceLine is line p.Line of p's file, if the sources hold it and it is
// text a terminal shows as it is.
func (t *textWriter) sourceLine(p registry.Problem, sources map[string][]byte) (string, bool) {
	src, ok := sources[p.Path]
	if !ok || p.Line < 1 {
		return "", false
	}
	lines, ok := t.lines[p.Path]
	if !ok {
		lines = strings.Split(string(bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))), "\n")
		t.lines[p.Path] = lines
	}
	if p.Line > len(lines) {
		return "", false
	}
	line := lines[p.Line-1]
	if len(line) > 300 || strings.ContainsFunc(line, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		return "", false
	}
	return line, true
}

// padTo is the white space that puts a caret under column col (1-based,
// in characters) of line, keeping its tabs so the caret lines up.
func padTo(line string, col int) string {
	var b strings.Builder
	n := 0
	for _, r := range line {
		if n >= col-1 {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		n++
	}
	for ; n < col-1; n++ {
		b.WriteByte(' ')
	}
	return b.String()
}
