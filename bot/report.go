package bot

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/internal/markdown"
	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
)

// Check run names. Branch protection matches required checks by name, so
// these never change.
const (
	ValidationCheck = "SIP validation"
	ApprovalCheck   = "SIP approval"
	// SyncCheck is posted on each commit of the followed default branch:
	// whether the registry took it.
	SyncCheck = "SIP registry sync"
	// VerifyCheck is posted on commits of the followed default branch:
	// whether the policy, as of the commit's parent, approved it.
	VerifyCheck = "SIP main verification"
)

// Limits GitHub puts on what the App writes.
const (
	annotationsPerRequest = 50
	maxAnnotations        = 1000
	maxMarkdown           = 65535 // check-run summary and text; comments allow one more
)

// commentMarker finds the App's one comment on a pull request.
const commentMarker = "<!-- sip-bot:pull-request-report -->"

// pullReport is what validating a pull request found.
type pullReport struct {
	Files    int      // SIP files as the pull request would merge
	Touched  []string // SIP files the pull request adds, edits or removes
	Problems []registry.Problem
	// Inherited are problems the base branch already has in files the
	// pull request does not change: shown, but they do not fail it.
	Inherited []registry.Problem
	Preview   preview
	// Conflicts are SIP files that both the pull request and the base
	// branch changed since they parted; Branch is the base branch.
	Conflicts []string
	Branch    string
}

// preview is what the registry will change when the pull request merges.
type preview struct {
	Added, Changed, Deprecated []string
}

func (p preview) empty() bool { return len(p.Added)+len(p.Changed)+len(p.Deprecated) == 0 }

func (r *pullReport) conclusion() string {
	if errs, _ := registry.Count(r.Problems); errs > 0 || len(r.Conflicts) > 0 {
		return "failure"
	}
	return "success"
}

func (r *pullReport) title() string {
	if len(r.Conflicts) > 0 {
		return fmt.Sprintf("Merge conflict with %s in %s", r.Branch, markdown.Plural(len(r.Conflicts), "SIP file"))
	}
	errs, warns := registry.Count(r.Problems)
	title := fmt.Sprintf("%s, %s", markdown.Plural(errs, "error"), markdown.Plural(warns, "warning"))
	if errs+warns == 0 {
		title = fmt.Sprintf("%s valid", markdown.Plural(len(r.Touched), "changed SIP file"))
	}
	if len(r.Inherited) > 0 {
		title += fmt.Sprintf("; %s already on %s", markdown.Plural(len(r.Inherited), "problem"), r.Branch)
	}
	return title
}

// summary is the check run's Markdown summary. It holds no times or ids,
// so the same result always has the same summary (the App compares them
// to avoid posting a result twice).
func (r *pullReport) summary() string {
	var b strings.Builder
	errs, warns := registry.Count(r.Problems)
	if len(r.Conflicts) > 0 {
		fmt.Fprintf(&b, "This pull request and `%s` both changed these SIP files since they parted, differently; "+
			"merge `%s` into the branch and resolve them, and the pull request is checked again:\n\n", r.Branch, r.Branch)
		for _, p := range r.Conflicts {
			fmt.Fprintf(&b, "- `%s`\n", p)
		}
		b.WriteString("\nThe files without a conflict were checked as they would merge:\n\n")
	}
	fmt.Fprintf(&b, "Checked %s as they would merge into the base branch now (%s in this pull request): %s, %s.\n\n",
		markdown.Plural(r.Files, "SIP file"), markdown.Plural(len(r.Touched), "changed file"), markdown.Plural(errs, "error"), markdown.Plural(warns, "warning"))
	problemTable(&b, r.Problems)
	if len(r.Inherited) > 0 {
		fmt.Fprintf(&b, "### Already on `%s`\n\nThese problems are in SIP files this pull request does not change, and `%s` has them already: "+
			"they do not fail this check. Fix them in a pull request of their own.\n\n", r.Branch, r.Branch)
		problemTable(&b, r.Inherited)
	}
	if len(r.Conflicts) > 0 {
		b.WriteString("### On merge\n\nNothing can merge until the conflicts are resolved.\n")
		return truncate(b.String(), maxMarkdown)
	}
	b.WriteString("### On merge, the registry will\n\n")
	if r.Preview.empty() {
		b.WriteString("change nothing.\n")
	}
	for _, l := range []struct {
		verb string
		ids  []string
	}{{"add", r.Preview.Added}, {"update", r.Preview.Changed}, {"deprecate", r.Preview.Deprecated}} {
		for _, id := range l.ids {
			fmt.Fprintf(&b, "- %s %s\n", l.verb, id)
		}
	}
	return truncate(b.String(), maxMarkdown)
}

// problemTable writes problems as a Markdown table.
func problemTable(b *strings.Builder, problems []registry.Problem) {
	if len(problems) == 0 {
		return
	}
	b.WriteString("| File | Line | Rule | Problem |\n|---|---|---|---|\n")
	for _, p := range problems {
		line := "–"
		if p.Line > 0 {
			line = fmt.Sprint(p.Line)
		}
		fmt.Fprintf(b, "| `%s` | %s | [`%s`](%s) | %s |\n", p.Path, line, p.Rule, ruleURL(p.Rule), markdown.Cell(p.Message))
	}
	b.WriteString("\n")
}

// annotations puts each problem on its exact lines. GitHub allows columns
// only on one-line annotations.
func (r *pullReport) annotations() []*github.CheckRunAnnotation {
	out := []*github.CheckRunAnnotation{}
	for _, p := range r.Conflicts {
		out = append(out, &github.CheckRunAnnotation{Path: github.String(p), StartLine: github.Int(1), EndLine: github.Int(1),
			AnnotationLevel: github.String("failure"), Title: github.String("merge-conflict"),
			Message: github.String("Both this pull request and " + r.Branch + " changed this file since they parted. Merge " + r.Branch + " into the branch and resolve it.")})
	}
	inherited := len(r.Problems)
	for i, p := range append(slices.Clip(r.Problems), r.Inherited...) {
		if len(out) == maxAnnotations {
			break
		}
		start := max(p.Line, 1)
		end := max(p.EndLine, start)
		level := "failure"
		switch {
		case i >= inherited:
			level = "notice" // the base branch's, not the pull request's
		case p.Severity == registry.SeverityWarning:
			level = "warning"
		}
		msg := p.Message
		if p.Hint != "" {
			msg += "\n\n" + p.Hint
		}
		a := &github.CheckRunAnnotation{Path: github.String(p.Path), StartLine: github.Int(start), EndLine: github.Int(end),
			AnnotationLevel: github.String(level), Title: github.String(p.Rule), Message: github.String(truncate(msg, 60000))}
		if start == end && p.Column > 0 {
			a.StartColumn, a.EndColumn = github.Int(p.Column), github.Int(p.Column)
		}
		out = append(out, a)
	}
	return out
}

// commentBody is the App's one comment on a pull request: the validation
// and the approval state, kept up to date in place.
func commentBody(r *pullReport, d *policy.Decision) string {
	var b strings.Builder
	b.WriteString(commentMarker + "\n")
	// What blocks comes first, one line per requirement, each saying who
	// can satisfy it; the details follow.
	var blocks []string
	if r.conclusion() != "success" {
		blocks = append(blocks, "SIP validation: "+r.title()+" (the author fixes them; see below)")
	}
	if d != nil {
		blocks = append(blocks, d.MissingLines()...)
	}
	if len(blocks) > 0 {
		b.WriteString("**What blocks this pull request:**\n\n")
		for _, l := range blocks {
			b.WriteString("- " + l + "\n")
		}
		b.WriteString("\n")
	}
	if r.conclusion() == "success" {
		fmt.Fprintf(&b, "### ✅ SIP validation: %s\n\n", r.title())
	} else {
		fmt.Fprintf(&b, "### ❌ SIP validation: %s\n\n", r.title())
	}
	b.WriteString(r.summary())
	if d != nil {
		fmt.Fprintf(&b, "\n### SIP approval: %s\n\n%s", d.State, d.Explain())
	}
	return truncate(b.String(), maxMarkdown)
}

func ruleURL(rule string) string {
	return "https://github.com/sipregistry/sip/blob/main/docs/rules.md#" + rule
}

// truncate cuts s to at most n characters (GitHub counts characters),
// saying so at the end.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	const note = "\n\n… (truncated)"
	r := []rune(s)
	return string(r[:n-utf8.RuneCountInString(note)]) + note
}
