package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/report"
)

var update = flag.Bool("update", false, "rewrite golden files")

var tool = report.Tool{Name: "sip", Version: "1.2.3", InformationURI: "https://example.org/sip", RulesURI: "https://example.org/sip/rules.md"}

func sample() report.Result {
	return report.Result{Files: 3, Problems: []registry.Problem{
		{Path: "evaluations/SIP-7.md", Line: 179, Column: 3, EndLine: 240, Severity: "error", Rule: "config-invalid",
			Message: "rubric max_score values sum to 105, not 100", Hint: "Adjust the max_score values so they add up to 100."},
		{Path: "evaluations/dir with space/SIP-4.md", Line: 15, Column: 12, EndLine: 15, Severity: "warning", Rule: "field-alias",
			Message: "handler \"twitter_verification_handler\" is the SafeMolt name of \"x_verification_handler\"", Hint: "Write handler: x_verification_handler."},
		{Path: "evaluations/SIP-3.md", Line: 1, Column: 1, EndLine: 1, Severity: "error", Rule: "sip-deleted",
			Message: "100% gone: a, b\nand more", Hint: "Restore it."},
	}}
}

func write(t *testing.T, format string, r report.Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Write(&buf, format, r, tool); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFormatsGolden(t *testing.T) {
	t.Parallel()
	for _, format := range report.Formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			got := write(t, format, sample())
			path := filepath.Join("testdata", "sample."+format+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestTextShowsTheSource: with the files' contents, the text format shows
// each problem's line with a caret under its column (tabs kept so it lines
// up), and the hint, in colour when asked; a line it cannot show safely
// (control characters, past the end) is left out.
func TestTextShowsTheSource(t *testing.T) {
	t.Parallel()
	r := report.Result{Files: 2, Sources: map[string][]byte{
		"evaluations/SIP-5.md": []byte("---\nsip: 5\nid: Bad_Id\n\tname: x\n---\n"),
		"evaluations/SIP-6.md": []byte("---\nid: \x1b[2Jtrick\n---\n"),
	}, Problems: []registry.Problem{
		{Path: "evaluations/SIP-5.md", Line: 3, Column: 5, EndLine: 3, Severity: "error", Rule: "id-format",
			Message: "id \"Bad_Id\" is not kebab-case", Hint: "Write bad-id."},
		{Path: "evaluations/SIP-5.md", Line: 4, Column: 2, EndLine: 6, Severity: "warning", Rule: "yaml-syntax", Message: "a tab", Hint: "Use spaces."},
		{Path: "evaluations/SIP-5.md", Line: 40, Column: 1, EndLine: 40, Severity: "error", Rule: "body-empty", Message: "past the end"},
		{Path: "evaluations/SIP-6.md", Line: 2, Column: 5, EndLine: 2, Severity: "error", Rule: "id-format", Message: "escape"},
	}}
	for _, color := range []bool{false, true} {
		r.Color = color
		got := write(t, "text", r)
		path := filepath.Join("testdata", "source.text.golden")
		if color {
			path = filepath.Join("testdata", "source.text-color.golden")
		}
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("color=%v (-want +got):\n%s", color, diff)
		}
		if strings.Contains(string(got), "\x1b[2J") {
			t.Error("a control sequence from a file reached the terminal")
		}
	}
}

func TestJSONHasEmptyListNotNull(t *testing.T) {
	t.Parallel()
	var out struct {
		Problems []registry.Problem `json:"problems"`
	}
	raw := write(t, "json", report.Result{Files: 1})
	if err := json.Unmarshal(raw, &out); err != nil || out.Problems == nil || !bytes.Contains(raw, []byte(`"problems": []`)) {
		t.Errorf("got %s (%v)", raw, err)
	}
}

func TestUnknownFormat(t *testing.T) {
	t.Parallel()
	if err := report.Write(&bytes.Buffer{}, "xml", sample(), tool); err == nil {
		t.Error("want an error for an unknown format")
	}
}

// TestSARIFMatchesSchema validates the SARIF output against the official
// SARIF 2.1.0 schema, for a report with problems and an empty one.
func TestSARIFMatchesSchema(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("testdata", "sarif-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]report.Result{"problems": sample(), "empty": {Files: 2}} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(write(t, "sarif", r)))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("%s: SARIF output does not match the schema: %v", name, err)
		}
	}
}

// TestSARIFOfficialValidator runs Microsoft's SARIF multitool (from the npm
// package @microsoft/sarif-multitool) when SIP_SARIF_MULTITOOL names it.
// .ci/run installs it; under CI=true its absence is a failure.
func TestSARIFOfficialValidator(t *testing.T) {
	bin := os.Getenv("SIP_SARIF_MULTITOOL")
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("SIP_SARIF_MULTITOOL is not set; .ci/run installs the SARIF multitool")
		}
		t.Skip("SKIPPING the official SARIF validator: set SIP_SARIF_MULTITOOL (see .ci/run)")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "sip.sarif")
	if err := os.WriteFile(in, write(t, "sarif", sample()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "validation.sarif")
	cmd := exec.Command(bin, "validate", in, "--output", out)
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("multitool failed: %v\n%s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no validation log: %v\n%s", err, msg)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID  string `json:"ruleId"`
				Level   string `json:"level"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(raw, &log); err != nil {
		t.Fatal(err)
	}
	for _, run := range log.Runs {
		for _, r := range run.Results {
			if r.Level == "error" {
				t.Errorf("multitool: %s %s: %s", r.Level, r.RuleID, r.Message.Text)
			} else {
				t.Logf("multitool advice: %s %s: %s", r.Level, r.RuleID, strings.TrimSpace(r.Message.Text))
			}
		}
	}
}

// TestTextGroupsRepeats: past the first GroupShown problems of a rule the
// text format counts the rest in one line; --verbose shows them all,
// --quiet shows errors only, and JSON keeps every problem either way.
func TestTextGroupsRepeats(t *testing.T) {
	t.Parallel()
	var ps []registry.Problem
	for i := range 45 {
		ps = append(ps, registry.Problem{Path: fmt.Sprintf("evaluations/SIP-%d.md", i/3+1), Line: 5 + i%3, Column: 3, EndLine: 5 + i%3,
			Severity: "warning", Rule: "config-deprecated", Message: "old spelling"})
	}
	ps = append(ps, registry.Problem{Path: "evaluations/SIP-1.md", Line: 2, Column: 6, EndLine: 2, Severity: "error", Rule: "sip-duplicate", Message: "twice"})
	r := report.Result{Files: 15, Problems: ps}
	for _, tc := range []struct {
		name            string
		verbose, quiet  bool
		shown           int // config-deprecated problems printed in full
		errorShown      bool
		groupLine, tail string
	}{
		{"grouped", false, false, report.GroupShown, true,
			"config-deprecated: 45 occurrences in 15 files; the first 20 are shown above (--verbose shows all)", "15 files, 1 error, 45 warnings\n"},
		{"verbose", true, false, 45, true, "", "15 files, 1 error, 45 warnings\n"},
		{"quiet", false, true, 0, true, "", "15 files, 1 error, 45 warnings (45 warnings not shown: --quiet)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := r
			r.Verbose, r.Quiet = tc.verbose, tc.quiet
			got := string(write(t, "text", r))
			if n := strings.Count(got, "[config-deprecated]"); n != tc.shown {
				t.Errorf("%d config-deprecated problems shown, want %d", n, tc.shown)
			}
			if strings.Contains(got, "[sip-duplicate]") != tc.errorShown {
				t.Errorf("error shown = %v, want %v", !tc.errorShown, tc.errorShown)
			}
			if tc.groupLine != "" && !strings.Contains(got, tc.groupLine) {
				t.Errorf("output lacks %q:\n%s", tc.groupLine, got)
			}
			if tc.groupLine == "" && strings.Contains(got, "occurrences") {
				t.Errorf("output groups when it should not:\n%s", got)
			}
			if !strings.HasSuffix(got, tc.tail) {
				t.Errorf("output ends %q, want %q", got[max(0, len(got)-80):], tc.tail)
			}
			var j struct{ Problems []registry.Problem }
			if err := json.Unmarshal(write(t, "json", r), &j); err != nil || len(j.Problems) != len(ps) {
				t.Errorf("JSON holds %d problems (%v), want every one of %d", len(j.Problems), err, len(ps))
			}
		})
	}
}
