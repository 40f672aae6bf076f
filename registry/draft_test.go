package registry_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

func bundledDocs(t *testing.T) []*registry.Document {
	t.Helper()
	files, err := registry.ReadFS(os.DirFS("../evaluations"), ".", "evaluations")
	if err != nil {
		t.Fatal(err)
	}
	return registry.ParseFiles(files)
}

func bundledContent(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../evaluations/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func errorRules(ps []registry.Problem) []string {
	var out []string
	for _, p := range ps {
		if p.Severity == registry.SeverityError {
			out = append(out, p.Rule)
		}
	}
	return out
}

// newDraft is SIP-2 turned into a new SIP with number n and id id.
func newDraft(t *testing.T, n, id string) string {
	s := bundledContent(t, "SIP-2.md")
	s = strings.Replace(s, "sip: 2\n", "sip: "+n+"\n", 1)
	s = strings.Replace(s, "id: poaw\n", "id: "+id+"\n", 1)
	return strings.Replace(s, "# SIP-2: Proof", "# SIP-"+n+": Proof", 1)
}

func TestCheckDraft(t *testing.T) {
	t.Parallel()
	docs := bundledDocs(t)
	ctx := registry.DraftContext{Name: "the registry", Dir: "evaluations", Docs: docs, Removed: map[int]string{40: "gone"}}
	sip2 := bundledContent(t, "SIP-2.md")
	for _, tt := range []struct {
		name      string
		content   string
		new       bool
		wantRules []string // errors only
		wantPath  string
		change    string
	}{
		{"a valid new SIP", newDraft(t, "41", "poaw-two"), true, nil, "evaluations/SIP-41.md", "new"},
		{"a number the registry holds", newDraft(t, "3", "poaw-two"), true, []string{"file-name-mismatch", "sip-duplicate"}, "evaluations/SIP-new.md", "new"},
		{"a number the registry holds, as a change", newDraft(t, "3", "poaw-two"), false, []string{"id-changed", "updated-at-not-advanced", "version-not-bumped"}, "evaluations/SIP-3.md", "edit"},
		{"an id the registry holds", newDraft(t, "41", "poaw"), true, []string{"id-duplicate"}, "evaluations/SIP-41.md", "new"},
		{"a removed SIP's number", newDraft(t, "40", "poaw-two"), true, []string{"sip-duplicate"}, "evaluations/SIP-40.md", "new"},
		{"an unknown prerequisite", strings.Replace(newDraft(t, "41", "poaw-two"), "prerequisites: []", "prerequisites: [no-such-sip]", 1), true,
			[]string{"prerequisite-missing"}, "evaluations/SIP-41.md", "new"},
		{"an edit without a version bump", strings.Replace(sip2, "sort its numbers", "sort its integers", 1), false,
			[]string{"updated-at-not-advanced", "version-not-bumped"}, "evaluations/SIP-2.md", "edit"},
		{"an edit that follows the rules", strings.NewReplacer("version: \"1.0.0\"", "version: \"1.0.1\"", "updated_at: 2026-11-22", "updated_at: 2026-11-25T10:00:00Z").Replace(sip2),
			false, nil, "evaluations/SIP-2.md", "edit"},
		{"the same file", sip2, false, nil, "evaluations/SIP-2.md", "unchanged"},
		{"not a SIP", "hello", true, []string{"frontmatter-missing"}, "evaluations/SIP-draft.md", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := registry.CheckDraft(ctx, registry.Draft{Content: []byte(tt.content), New: tt.new})
			rules := errorRules(got.Problems)
			slices.Sort(rules)
			rules = slices.Compact(rules)
			if !slices.Equal(rules, tt.wantRules) {
				t.Errorf("errors %v, want %v\n%v", rules, tt.wantRules, got.Problems)
			}
			if tt.wantPath != "" && got.Path != tt.wantPath {
				t.Errorf("path %q, want %q", got.Path, tt.wantPath)
			}
			if got.Preview.Change != tt.change {
				t.Errorf("change %q, want %q", got.Preview.Change, tt.change)
			}
			for _, p := range got.Problems {
				if p.Path != got.Path {
					t.Errorf("a problem of another file: %v", p)
				}
			}
		})
	}
}

func TestCheckDraftPreview(t *testing.T) {
	t.Parallel()
	docs := bundledDocs(t)
	ctx := registry.DraftContext{Name: "the registry", Dir: "evaluations", Docs: docs, Removed: map[int]string{40: "gone"}}
	draft := strings.Replace(newDraft(t, "41", "poaw-two"), "prerequisites: []", "prerequisites: [poaw, no-such-sip]", 1)
	got := registry.CheckDraft(ctx, registry.Draft{Content: []byte(draft)}).Preview
	if got.Number != 41 || got.ID != "poaw-two" || got.Version != "1.0.0" || got.Handler != "poaw_handler" || got.NextNumber != 41 {
		t.Errorf("preview %+v", got)
	}
	want := []registry.DraftPrerequisite{{ID: "poaw", Number: 2, Name: "Proof of Agentic Work", Status: registry.StatusActive}, {ID: "no-such-sip"}}
	if !slices.Equal(got.Prerequisites, want) {
		t.Errorf("prerequisites %+v, want %+v", got.Prerequisites, want)
	}
}

// TestCheckDraftAgreesWithValidate: a draft's problems are the problems
// the repository's check reports for the same file beside the registry's.
func TestCheckDraftAgreesWithValidate(t *testing.T) {
	t.Parallel()
	docs := bundledDocs(t)
	draft := strings.Replace(newDraft(t, "41", "poaw"), "prerequisites: []", "prerequisites: [nope]", 1)
	got := registry.CheckDraft(registry.DraftContext{Name: "base", Dir: "evaluations", Docs: docs}, registry.Draft{Content: []byte(draft)})
	head := append(slices.Clip(docs), registry.Parse("evaluations/SIP-41.md", []byte(draft)))
	var want []registry.Problem
	for _, p := range registry.Validate(head, registry.Options{Dir: "evaluations", Base: &registry.Snapshot{Name: "base", Docs: docs}}) {
		if p.Path == "evaluations/SIP-41.md" {
			want = append(want, p)
		}
	}
	if !slices.Equal(got.Problems, want) || len(want) == 0 {
		t.Errorf("CheckDraft\n%v\nValidate\n%v", got.Problems, want)
	}
}
