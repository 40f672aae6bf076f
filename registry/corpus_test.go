package registry_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

// readCorpus reads SafeMolt's real SIP files (testdata/safemolt, copied
// verbatim with its licence; see PROVENANCE.md there).
func readCorpus(t testing.TB) []registry.File {
	t.Helper()
	var files []registry.File
	for _, dir := range []string{"evaluations", "schools"} {
		got, err := registry.ReadFS(os.DirFS("testdata/safemolt"), dir, dir)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, got...)
	}
	if len(files) != 45 {
		t.Fatalf("read %d corpus files, want 45", len(files))
	}
	return files
}

func TestCorpusEveryFileParses(t *testing.T) {
	t.Parallel()
	for _, d := range registry.ParseFiles(readCorpus(t)) {
		if d.SIP == nil {
			t.Errorf("%s: not parsed: %v", d.Path, d.Problems)
		}
	}
}

// TestCorpusProblems holds every problem the engine finds in the corpus in
// a golden file, and checks by hand the real defects that the SafeMolt
// inventory (section 1.6) lists.
func TestCorpusProblems(t *testing.T) {
	t.Parallel()
	problems := registry.Validate(registry.ParseFiles(readCorpus(t)), registry.Options{})
	var b strings.Builder
	for _, p := range problems {
		fmt.Fprintf(&b, "%s\n\thint: %s\n", p, p.Hint)
	}
	compareGolden(t, "safemolt.golden", []byte(b.String()))

	for _, want := range []struct {
		path, rule string
		line       int
		contains   string
	}{
		// 11. SIP-7's rubric sums to 105.
		{"evaluations/SIP-7.md", "config-invalid", 179, "sum to 105"},
		// 3. File names that do not match the number.
		{"schools/ao/evaluations/SIP-AO1.md", "file-name-mismatch", 2, "sip 3101"},
		{"schools/finance/evaluations/SIP-F1.md", "file-name-mismatch", 2, "sip 101"},
		{"schools/humanities/evaluations/SIP-H1.md", "file-name-mismatch", 2, "sip 201"},
		// 6. Handlers that do not exist.
		{"evaluations/SIP-1.md", "handler-unknown", 14, `"default"`},
		{"evaluations/SIP-8.md", "handler-unknown", 103, "frontier_brittleness_handler"},
		{"evaluations/SIP-14.md", "handler-unknown", 95, "behavioral_collapse_handler"},
		{"evaluations/SIP-15.md", "handler-unknown", 92, "linguistic_cultural_eval_handler"},
		{"schools/finance/evaluations/SIP-F1.md", "handler-unknown", 11, `"default"`},
		// 9. Integer versions.
		{"schools/finance/evaluations/SIP-F1.md", "version-semver", 9, "integer"},
		{"schools/_templates/evaluations/_template.md", "version-semver", 9, "integer"},
		// 8. Missing fields.
		{"schools/finance/evaluations/SIP-F1.md", "field-required", 1, `"author"`},
		{"schools/humanities/evaluations/SIP-H1.md", "field-required", 1, `"created_at"`},
		// 9. script_path: none is not a path.
		{"evaluations/SIP-1.md", "script-path-invalid", 15, "none"},
		// 10. name and title both given.
		{"evaluations/SIP-1.md", "field-conflict", 5, "title"},
		// 2. The two SIP-4 files (and the foundation copies) validated together.
		{"schools/humanities/evaluations/SIP-4.md", "sip-duplicate", 2, "evaluations/SIP-4.md:2"},
		{"schools/humanities/evaluations/SIP-4.md", "id-duplicate", 3, "twitter-verification"},
		{"schools/foundation/evaluations/SIP-16.md", "sip-duplicate", 2, "evaluations/SIP-16.md"},
		// 18. The template: its inline comments are comments, so what
		// remains wrong is the name, the version and the handler.
		{"schools/_templates/evaluations/_template.md", "file-name-mismatch", 2, "sip 999"},
		{"schools/_templates/evaluations/_template.md", "handler-unknown", 11, `"default"`},
		// 12. SIP-9's prompts have no should lists.
		{"evaluations/SIP-9.md", "config-invalid", 17, "should is required"},
		// SafeMolt's aliases are read, with a warning.
		{"evaluations/SIP-4.md", "field-alias", 15, "twitter_verification_handler"},
		{"evaluations/SIP-5.md", "field-alias", 17, "non_spamminess_proctor_handler"},
	} {
		t.Run(want.path+" "+want.rule, func(t *testing.T) {
			found := slices.ContainsFunc(problems, func(p registry.Problem) bool {
				return p.Path == want.path && p.Rule == want.rule && p.Line == want.line && strings.Contains(p.Message, want.contains)
			})
			if !found {
				t.Errorf("got no %s:%d [%s] …%s…; want it", want.path, want.line, want.rule, want.contains)
			}
		})
	}
}

// TestCorpusDefinitions holds the normalised definitions of the files that
// SafeMolt's own parser got wrong.
func TestCorpusDefinitions(t *testing.T) {
	t.Parallel()
	docs := map[string]*registry.Document{}
	for _, d := range registry.ParseFiles(readCorpus(t)) {
		docs[d.Path] = d
	}
	// 7. A flow list is a list, not the string "[identity-check]".
	if got := docs["evaluations/SIP-5.md"].SIP.Prerequisites; !slices.Equal(got, []string{"identity-check"}) {
		t.Errorf("SIP-5 prerequisites = %q, want [identity-check]", got)
	}
	// 18. Inline comments are not part of values.
	if s := docs["schools/_templates/evaluations/_template.md"].SIP; s.Number != 999 || s.ID != "school-slug-eval-name" {
		t.Errorf("template sip, id = %d, %q; want 999, school-slug-eval-name", s.Number, s.ID)
	}
	// 10. adapted-from (the spelling in the files) is kept, not dropped.
	if got := docs["evaluations/SIP-7.md"].SIP.AdaptedFrom; !strings.HasSuffix(got, "evidence-based-ai-tutoring.yml") {
		t.Errorf("SIP-7 adapted-from = %q", got)
	}
	// Escapes in double-quoted strings are processed.
	msg := docs["evaluations/SIP-10.md"].SIP.Config.Certification.Prompts[0].Messages[1].Content
	if !strings.Contains(msg, "meeting.\nLabel: ceo") {
		t.Errorf("SIP-10 escape not processed: %q", msg)
	}
	// 13. AO weights are read.
	if w := docs["schools/ao/evaluations/SIP-AO2.md"].SIP.Config.Certification.Rubric; len(w) == 0 || w[0].Weight == 0 {
		t.Errorf("SIP-AO2 rubric weights not read: %+v", w)
	}

	var out []any
	for _, p := range []string{"evaluations/SIP-2.md", "evaluations/SIP-5.md", "schools/_templates/evaluations/_template.md", "schools/finance/evaluations/SIP-F1.md"} {
		out = append(out, map[string]any{"path": p, "sip": docs[p].SIP})
	}
	got, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, "safemolt-definitions.golden.json", append(got, '\n'))
}

// TestCorpusBodyWarnings is the hand review of every body-sections and
// body-title warning SafeMolt's corpus gets: each that remains is listed
// with why it is right, and any other is a false positive. Copies of a
// file under schools/foundation (byte-identical) share their entry.
func TestCorpusBodyWarnings(t *testing.T) {
	t.Parallel()
	const (
		noProcedure = "no section says how a run proceeds"
		noPassing   = "no section says what passes"
	)
	reviewed := map[string]string{
		"SIP-1.md “Rationale”":       "a process SIP; Abstract, Motivation and Specification are there, Rationale is not (Implementation and References are other things)",
		"SIP-2.md “How it runs”":     "Description lists what is tested, Requirements the limits, API Endpoints the URLs; " + noProcedure + " (start, fetch, submit in order)",
		"SIP-3.md “How it runs”":     "same layout as SIP-2: Description, Requirements, API Endpoints, Submission Format; " + noProcedure,
		"SIP-4.md “How it runs”":     "Current flow describes human sign-in through Cognito, not the evaluation; the automated evaluation section says what is graded, not how it runs",
		"SIP-4.md “Passing”":         "no section says what passes (the grading of isClaimed and owner is one sentence inside a technical note)",
		"SIP-8.md “How it runs”":     "the body is one Overview section; " + noProcedure,
		"SIP-8.md “Passing”":         "the body is one Overview section; " + noPassing,
		"SIP-8.md title":             "the body starts at ## Overview: there is no level-1 title at all",
		"SIP-9.md “How it runs”":     "Overview, Research-to-Probe Traceability and Exemplars only; " + noProcedure,
		"SIP-9.md “Passing”":         "Overview, Research-to-Probe Traceability and Exemplars only; " + noPassing,
		"SIP-10.md “How it runs”":    "Abstract, Motivation, Traceability and Exemplars only; " + noProcedure,
		"SIP-10.md “Passing”":        "Abstract, Motivation, Traceability and Exemplars only; " + noPassing,
		"SIP-11.md “How it runs”":    "Overview, Research-to-Probe Mapping and Exemplars only; " + noProcedure,
		"SIP-11.md “Passing”":        "Overview, Research-to-Probe Mapping and Exemplars only; " + noPassing,
		"SIP-12.md “Passing”":        "Certification Process says register, execute, submit; no section (and no sentence) says what passes",
		"SIP-12.md title":            "the title “Verbatim Case-Based Safety Evaluation” and the name “Safety Probes” differ in words, not punctuation: one of them is out of date",
		"_template.md “How it runs”": "the school template has Description, Prompt, Rubric and Examples; a template without a procedure section teaches its omission",
		"SIP-F1.md “How it runs”":    "made from the template: Description, Prompt, Rubric, Examples; " + noProcedure,
		"SIP-H1.md “How it runs”":    "made from the template; " + noProcedure,
		"SIP-AO-E1.md “How it runs”": "Description, Passing Score and Points Awarded only; " + noProcedure,
		"SIP-AO-E2.md “How it runs”": "Description, Passing Score and Points Awarded only; " + noProcedure,
		"SIP-AO-E3.md “How it runs”": "Description, Passing Score and Points Awarded only; " + noProcedure,
		"SIP-AO1.md “How it runs”":   "Description, What this evaluation tests, Research Basis, Exemplars, Passing Score; " + noProcedure,
		"SIP-AO2.md “How it runs”":   "as SIP-AO1; " + noProcedure,
		"SIP-AO3.md “How it runs”":   "as SIP-AO1; " + noProcedure,
		"SIP-AO4.md “How it runs”":   "as SIP-AO1; " + noProcedure,
		"SIP-AO5.md “How it runs”":   "as SIP-AO1, with who takes it; " + noProcedure,
		"SIP-AO6.md “How it runs”":   "as SIP-AO1; " + noProcedure,
	}
	seen := map[string]bool{}
	for _, p := range registry.Validate(registry.ParseFiles(readCorpus(t)), registry.Options{}) {
		var key string
		switch p.Rule {
		case "body-sections":
			first, _, _ := strings.Cut(strings.TrimPrefix(p.Message, "the body has no section "), " or ")
			key = path.Base(p.Path) + " " + first
		case "body-title":
			key = path.Base(p.Path) + " title"
		default:
			continue
		}
		seen[key] = true
		if reviewed[key] == "" {
			t.Errorf("%s: %s: not in the reviewed list, a false positive?", p, key)
		}
	}
	for key := range reviewed {
		if !seen[key] {
			t.Errorf("reviewed warning %s is no longer reported: remove it from the list", key)
		}
	}
}
