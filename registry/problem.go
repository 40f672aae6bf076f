package registry

import (
	"cmp"
	"fmt"
	"slices"
)

// Severity says whether a problem blocks a SIP (error) or only advises.
type Severity string

// The severities a Problem can have.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Span locates a problem in a file. Lines and columns count from 1; zero
// means unknown (the problem is about the whole file).
type Span struct {
	Line    int
	Column  int
	EndLine int
}

// Problem is one thing wrong with a SIP, in the shape docs/rules.md describes.
type Problem struct {
	Path     string   `json:"path"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	EndLine  int      `json:"end_line"`
	Severity Severity `json:"severity"`
	Rule     string   `json:"rule"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint"`
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d:%d: %s [%s] %s", p.Path, p.Line, p.Column, p.Severity, p.Rule, p.Message)
}

// SortProblems puts problems in their stable report order: by path, line,
// column, rule, then message.
func SortProblems(ps []Problem) {
	slices.SortStableFunc(ps, compareProblems)
}

func compareProblems(a, b Problem) int {
	return cmp.Or(
		cmp.Compare(a.Path, b.Path),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Column, b.Column),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Message, b.Message),
		cmp.Compare(a.Severity, b.Severity),
	)
}

// Count returns how many problems are errors and how many are warnings.
func Count(ps []Problem) (errors, warnings int) {
	for _, p := range ps {
		if p.Severity == SeverityError {
			errors++
		} else {
			warnings++
		}
	}
	return errors, warnings
}

// problemAt is a problem of document d at a place in it.
func problemAt(d *Document, at Span, sev Severity, rule, hint, format string, args ...any) Problem {
	return Problem{
		Path: d.Path, Line: at.Line, Column: at.Column, EndLine: max(at.EndLine, at.Line),
		Severity: sev, Rule: rule, Hint: hint, Message: fmt.Sprintf(format, args...),
	}
}

// problems collects the problems of one file.
type problems struct {
	path string
	list []Problem
}

func (ps *problems) add(sev Severity, rule string, at Span, hint, format string, args ...any) {
	ps.addText(sev, rule, at, hint, fmt.Sprintf(format, args...))
}

// addText adds a problem whose message is written already.
func (ps *problems) addText(sev Severity, rule string, at Span, hint, message string) {
	if at.EndLine < at.Line {
		at.EndLine = at.Line
	}
	ps.list = append(ps.list, Problem{
		Path:     ps.path,
		Line:     at.Line,
		Column:   at.Column,
		EndLine:  at.EndLine,
		Severity: sev,
		Rule:     rule,
		Message:  message,
		Hint:     hint,
	})
}

func (ps *problems) errorf(rule string, at Span, hint, format string, args ...any) {
	ps.add(SeverityError, rule, at, hint, format, args...)
}

func (ps *problems) warnf(rule string, at Span, hint, format string, args ...any) {
	ps.add(SeverityWarning, rule, at, hint, format, args...)
}
