package report

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
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
// the source line with a caret under the column, and the hint. Unless
// r.Verbose, each rule's problems after the first GroupShown are counted
// in one line at the end instead: a rule broken 54,000 times is one
// fix, and its thousandth report says nothing the first did not.
func writeText(w io.Writer, r Result) error {
	t := textWriter{color: r.Color, lines: map[string][]int{}}
	type group struct {
		rule     string
		severity registry.Severity
		all      int
		files    map[string]bool
		shown    int
	}
	groups := map[string]*group{}
	var order []*group
	quieted := 0
	for _, p := range r.Problems {
		if r.Quiet && p.Severity != registry.SeverityError {
			quieted++
			continue
		}
		g := groups[p.Rule]
		if g == nil {
			g = &group{rule: p.Rule, severity: p.Severity, files: map[string]bool{}}
			groups[p.Rule] = g
			order = append(order, g)
		}
		g.all++
		g.files[p.Path] = true
		if r.Verbose || g.shown < GroupShown {
			g.shown++
			t.problem(p, r.Sources)
		}
	}
	slices.SortStableFunc(order, func(a, b *group) int { return cmp.Or(cmp.Compare(b.all, a.all), cmp.Compare(a.rule, b.rule)) })
	for _, g := range order {
		if g.shown == g.all {
			continue
		}
		fmt.Fprintf(&t.b, "%s: %s in %s; the first %d are shown above (--verbose shows all)\n",
			t.style(styleBold, g.rule), occurrences(g.all), files(len(g.files)), g.shown)
	}
	errs, warns := registry.Count(r.Problems)
	fmt.Fprintf(&t.b, "%s, %s, %s", plural(r.Files, "file"), plural(errs, "error"), plural(warns, "warning"))
	if quieted > 0 {
		fmt.Fprintf(&t.b, " (%s not shown: --quiet)", plural(quieted, "warning"))
	}
	t.b.WriteString("\n")
	_, err := io.WriteString(w, t.b.String())
	return err
}

// occurrences and files count with thousands separated: "54,000
// occurrences in 7,000 files".
func occurrences(n int) string { return counted(n, "occurrence") }
func files(n int) string       { return counted(n, "file") }

func counted(n int, word string) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n == 1 {
		return s + " " + word
	}
	return s + " " + word + "s"
}

type textWriter struct {
	b     strings.Builder
	color bool
	lines map[string][]int // where each line of a source starts, by path
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
// text a terminal shows as it is. Line starts are indexed once per file
// shown, without copying the file.
func (t *textWriter) sourceLine(p registry.Problem, sources map[string][]byte) (string, bool) {
	src, ok := sources[p.Path]
	if !ok || p.Line < 1 {
		return "", false
	}
	starts, ok := t.lines[p.Path]
	if !ok {
		starts = []int{0}
		for i := 0; ; {
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			starts = append(starts, i)
		}
		t.lines[p.Path] = starts
	}
	if p.Line > len(starts) {
		return "", false
	}
	end := len(src)
	if p.Line < len(starts) {
		end = starts[p.Line] - 1
	}
	line := strings.TrimSuffix(string(src[starts[p.Line-1]:end]), "\r")
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
