package bot

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

func sampleReport() (*pullReport, *policy.Decision) {
	r := &pullReport{Files: 9, Touched: []string{"evaluations/SIP-9.md"},
		Problems: []registry.Problem{
			{Path: "evaluations/SIP-9.md", Line: 7, Column: 9, EndLine: 7, Severity: registry.SeverityError, Rule: "status-invalid",
				Message: `status "bogus" is not one of draft | active | deprecated`, Hint: "Use draft for a new SIP."},
			{Path: "evaluations/SIP-9.md", Line: 2, Severity: registry.SeverityError, Rule: "number-collision",
				Message: "SIP number 9 is also claimed by pull request #2"},
			{Path: "evaluations/SIP-9.md", Severity: registry.SeverityWarning, Rule: "body-empty", Message: "a | pipe\nand a newline"},
		},
		Preview: preview{Added: []string{"SIP-9 `identity-nine` (Evaluation identity-nine 1.0.0)"}}}
	d := &policy.Decision{State: policy.Pending, Outcomes: []policy.Outcome{{Requirement: policy.Requirement{Rule: "a SIP changed",
		About: []string{"SIP-9"}, Count: 2, Who: []policy.Approvers{{Name: "maintainers", Group: policy.Group{Teams: []string{"octo/editors"}}}}},
		Approvers: []string{"mia"}}}, Ignored: []policy.Ignored{{User: "author", Reason: "the pull request's author's own review does not count"}}}
	return r, d
}

func TestCommentGolden(t *testing.T) {
	r, d := sampleReport()
	golden(t, "comment.golden.md", commentBody(r, d))
}

func TestAnnotations(t *testing.T) {
	r, _ := sampleReport()
	as := r.annotations()
	if len(as) != 3 {
		t.Fatalf("%d annotations", len(as))
	}
	if a := as[0]; a.GetStartLine() != 7 || a.GetEndLine() != 7 || a.GetStartColumn() != 9 || a.GetAnnotationLevel() != "failure" ||
		a.GetTitle() != "status-invalid" || !strings.Contains(a.GetMessage(), "Use draft") {
		t.Errorf("first = %+v", a)
	}
	if a := as[2]; a.GetStartLine() != 1 || a.GetEndLine() != 1 || a.StartColumn != nil || a.GetAnnotationLevel() != "warning" {
		t.Errorf("a whole-file warning goes on line 1 without columns: %+v", a)
	}
	many := &pullReport{}
	for range maxAnnotations + 10 {
		many.Problems = append(many.Problems, registry.Problem{Path: "evaluations/SIP-1.md", Line: 3, EndLine: 5, Column: 2, Severity: registry.SeverityError})
	}
	as = many.annotations()
	if len(as) != maxAnnotations || as[0].StartColumn != nil {
		t.Errorf("%d annotations; columns on a multi-line annotation: %v", len(as), as[0].StartColumn)
	}
	if s := many.summary(); utf8.RuneCountInString(s) > maxMarkdown || !strings.HasSuffix(s, "(truncated)") {
		t.Errorf("summary of %d characters, not truncated", utf8.RuneCountInString(s))
	}
}
