// Package report prints validation problems in the formats of `sip
// validate`: text for people, JSON for programs, SARIF 2.1.0 for code
// scanning, and GitHub workflow commands for annotations in Actions.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sipregistry/sip/registry"
)

// Formats lists the names Write accepts.
var Formats = []string{"text", "json", "sarif", "github"}

// Result is what one validation run found.
type Result struct {
	Files    int
	Problems []registry.Problem
	// Sources are the files' contents by path: the text format shows the
	// line of each problem from them, with a caret under the column.
	Sources map[string][]byte
	// Color makes the text format use ANSI colours.
	Color bool
	// Verbose makes the text format show every problem; by default it
	// shows the first GroupShown of each rule and counts the rest.
	Verbose bool
	// Quiet makes the text and github formats show errors only (the
	// summary still counts warnings). JSON and SARIF always hold every
	// problem.
	Quiet bool
}

// GroupShown is how many problems of one rule the text format shows in
// full before it counts the rest in one line.
const GroupShown = 20

// Write prints r in the named format.
func Write(w io.Writer, format string, r Result, tool Tool) error {
	switch format {
	case "text":
		return writeText(w, r)
	case "json":
		return writeJSON(w, r)
	case "sarif":
		return writeSARIF(w, r, tool)
	case "github":
		return writeGitHub(w, r)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

type jsonReport struct {
	Files    int                `json:"files"`
	Errors   int                `json:"errors"`
	Warnings int                `json:"warnings"`
	Problems []registry.Problem `json:"problems"`
}

func writeJSON(w io.Writer, r Result) error {
	errs, warns := registry.Count(r.Problems)
	out := jsonReport{Files: r.Files, Errors: errs, Warnings: warns, Problems: r.Problems}
	if out.Problems == nil {
		out.Problems = []registry.Problem{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// writeGitHub prints workflow commands, escaped as the Actions runner
// expects, so each problem becomes an annotation on its line.
func writeGitHub(w io.Writer, r Result) error {
	var b strings.Builder
	for _, p := range r.Problems {
		if r.Quiet && p.Severity != registry.SeverityError {
			continue
		}
		fmt.Fprintf(&b, "::%s file=%s,line=%d,endLine=%d,col=%d,title=%s::%s\n",
			p.Severity, escapeProperty(p.Path), max(p.Line, 1), max(p.EndLine, p.Line, 1), max(p.Column, 1),
			escapeProperty(p.Rule), escapeData(p.Message+hintSuffix(p.Hint)))
	}
	errs, warns := registry.Count(r.Problems)
	fmt.Fprintf(&b, "%s, %s, %s\n", plural(r.Files, "file"), plural(errs, "error"), plural(warns, "warning"))
	_, err := io.WriteString(w, b.String())
	return err
}

func hintSuffix(h string) string {
	if h == "" {
		return ""
	}
	return "\n" + h
}

func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
