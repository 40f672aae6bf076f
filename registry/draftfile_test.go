package registry_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
)

var draftNow = time.Date(2026, 11, 25, 10, 30, 0, 0, time.UTC)

// TestNewDraftFieldsAreValid: every type's starting fields, with an id,
// name and author filled in, make a file the rules accept.
func TestNewDraftFieldsAreValid(t *testing.T) {
	t.Parallel()
	ctx := registry.DraftContext{Name: "the registry", Dir: "evaluations", Docs: bundledDocs(t)}
	for _, typ := range registry.Types {
		t.Run(string(typ), func(t *testing.T) {
			t.Parallel()
			f := registry.NewDraftFields(typ, 41, draftNow)
			f.ID, f.Name, f.Author = "new-one", "New one", "Ada"
			f.Body = strings.Replace(f.Body, ": Name", ": New one", 1)
			file, err := f.File()
			if err != nil {
				t.Fatal(err)
			}
			got := registry.CheckDraft(ctx, registry.Draft{Content: file, New: true})
			if r := errorRules(got.Problems); len(r) > 0 {
				t.Errorf("errors %v\n%v\n%s", r, got.Problems, file)
			}
		})
	}
}

// TestDraftFileHostileFields: text built to break YAML stays the text of
// its field.
func TestDraftFileHostileFields(t *testing.T) {
	t.Parallel()
	hostile := []string{
		`a "quoted" name`, `it's`, "key: value", "two\nlines", "---", "&anchor", "*alias", "!!binary x", "# comment",
		"<script>alert(1)</script>", "{a: 1}", "[1, 2]", "yes", "null", "1e3", "- item", "|", "> folded", "\ttab", "  lead",
		"@at", "`back`", "%percent", "a: b\n---\nsip: 99",
	}
	for _, h := range hostile {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			f := registry.NewDraftFields(registry.TypeSimplePassFail, 41, draftNow)
			f.ID, f.Name, f.Module, f.Author, f.Prerequisites = h, h, h, h, []string{h}
			f.Body = h + "\n"
			file, err := f.File()
			if err != nil {
				t.Fatal(err)
			}
			d := registry.Parse("evaluations/SIP-41.md", file)
			if d.SIP == nil {
				t.Fatalf("no SIP read from\n%s", file)
			}
			s := d.SIP
			if s.Number != 41 || s.Name != h || s.Author != h || !slices.Equal(s.Prerequisites, []string{strings.TrimSpace(h)}) {
				t.Errorf("fields changed: number %d name %q author %q prerequisites %q\n%s", s.Number, s.Name, s.Author, s.Prerequisites, file)
			}
			if !strings.Contains(d.Body(), h) {
				t.Errorf("body lost %q:\n%s", h, d.Body())
			}
		})
	}
}

func TestDraftFileConfig(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, config string
		ok           bool
	}{
		{"a mapping", "timeout_seconds: 15\n", true},
		{"an anchor", "a: &x 1\nb: *x\n", false},
		{"an alias bomb", "a: &a [1,1]\nb: &b [*a,*a]\nc: [*b,*b]\n", false},
		{"a tag", "a: !!binary aGk=\n", false},
		{"a list", "- 1\n- 2\n", false},
		{"broken", "a: [\n", false},
		{"a frontmatter end", "a: |\n  ---\n  sip: 99\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := registry.NewDraftFields(registry.TypeSimplePassFail, 41, draftNow)
			f.Config = tt.config
			file, err := f.File()
			if tt.ok != (err == nil) || err != nil && !errors.Is(err, registry.ErrDraftConfig) {
				t.Fatalf("err %v, want ok %v", err, tt.ok)
			}
			if tt.ok {
				if d := registry.Parse("evaluations/SIP-41.md", file); d.SIP == nil || d.SIP.Number != 41 || d.SIP.Handler != "poaw_handler" {
					t.Errorf("file not read back:\n%s", file)
				}
			}
		})
	}
}

// TestEditDraft: a SIP prepared for a change passes the edit rules once
// its content changes, and keeps the rest of the file byte for byte.
func TestEditDraft(t *testing.T) {
	t.Parallel()
	docs := bundledDocs(t)
	sip2 := bundledContent(t, "SIP-2.md")
	got := string(registry.EditDraft([]byte(sip2), draftNow))
	if !strings.Contains(got, `version: "1.0.1"`+"\n") || !strings.Contains(got, "updated_at: 2026-11-25T10:30:00Z\n") {
		t.Fatalf("not bumped:\n%s", got[:400])
	}
	if strings.Count(got, "\n") != strings.Count(sip2, "\n") || !strings.HasSuffix(got, sip2[strings.Index(sip2, "---\n\n"):]) {
		t.Errorf("the rest of the file changed")
	}
	ch := registry.CheckDraft(registry.DraftContext{Name: "the registry", Dir: "evaluations", Docs: docs}, registry.Draft{Content: []byte(got + "\nMore.\n")})
	if r := errorRules(ch.Problems); len(r) > 0 || ch.Preview.Change != "edit" || ch.Preview.PreviousVersion != "1.0.0" {
		t.Errorf("errors %v change %q previous %q", r, ch.Preview.Change, ch.Preview.PreviousVersion)
	}
	if string(registry.EditDraft([]byte("no frontmatter"), draftNow)) != "no frontmatter" {
		t.Error("a file without frontmatter changed")
	}
}
