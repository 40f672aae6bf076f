package registry_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sipregistry/sip/registry"
)

const validSIP = `---
sip: 2
id: poaw
name: Proof of Agentic Work
module: core
type: simple_pass_fail
status: active
author: Ada
created_at: 2026-01-01
updated_at: 2026-01-01T10:00:00Z
version: "1.0.0"
executable:
  handler: poaw_handler
---

# Proof of Agentic Work

## How it runs

Fetch, sort, hash and submit.

## Passing

Within 15 seconds.
`

func aliasBomb() string {
	var b strings.Builder
	b.WriteString("---\nsip: 2\na: &a [x, x, x, x, x, x, x, x, x, x]\n")
	prev := "a"
	for _, l := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(l + ": &" + l + " [")
		for i := range 10 {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = l
	}
	b.WriteString("config:\n  bomb: *i\n---\n")
	return b.String()
}

func TestParseBadInput(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		content  string
		wantRule string // "" means the file must have no errors
		wantLine int
	}{
		{"valid", validSIP, "", 0},
		{"CRLF endings", strings.ReplaceAll(validSIP, "\n", "\r\n"), "", 0},
		{"CR endings", strings.ReplaceAll(validSIP, "\n", "\r"), "", 0},
		{"byte-order mark", "\xef\xbb\xbf" + validSIP, "", 0},
		{"blank lines before frontmatter", "\n\n" + validSIP, "", 0},
		{"no trailing newline after closing line", strings.SplitAfter(validSIP, "  handler: poaw_handler\n")[0] + "---", "", 0},
		{"no closing line", strings.Replace(validSIP, "\n---\n\n#", "\n\n#", 1), "frontmatter-missing", 1},
		{"no frontmatter", "# Just Markdown\n\nHello.\n", "frontmatter-missing", 1},
		{"empty file", "", "frontmatter-missing", 1},
		{"empty frontmatter", "---\n---\n# Body\n", "frontmatter-missing", 1},
		{"frontmatter is a list", "---\n- a\n- b\n---\n", "field-type", 2},
		{"frontmatter is a scalar", "---\nhello\n---\n", "field-type", 2},
		{"tab indentation", strings.Replace(validSIP, "  handler:", "\thandler:", 1), "yaml-syntax", 13},
		{"duplicate key", strings.Replace(validSIP, "module: core\n", "module: core\nmodule: safety\n", 1), "yaml-syntax", 6},
		{"unterminated flow list", strings.Replace(validSIP, "status: active\n", "status: active\nprerequisites: [poaw\n", 1), "yaml-syntax", 0},
		{"binary junk", "\x00\x01\x02\xff\xfe garbage", "file-encoding", 1},
		{"latin-1 byte on line 4", strings.Replace(validSIP, "Proof of", "Preuve d\xe9", 1), "file-encoding", 4},
		{"10 MB file", validSIP + strings.Repeat("x", 10<<20), "file-too-large", 1},
		{"alias bomb", aliasBomb(), "yaml-syntax", 0},
		{"deep flow nesting", "---\nconfig: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n---\n", "yaml-syntax", 0},
		{"deep block nesting", "---\nsip: 2\nconfig:\n" + deepBlock(200) + "---\n", "yaml-syntax", 0},
		{"merge key", strings.Replace(validSIP, "executable:\n", "base: &b {handler: poaw_handler}\nexecutable:\n  <<: *b\n", 1), "yaml-syntax", 0},
		{"non-string key", strings.Replace(validSIP, "module: core\n", "module: core\n[a, b]: c\n", 1), "yaml-syntax", 6},
		{"huge integer", strings.Replace(validSIP, "sip: 2", "sip: 99999999999999999999", 1), "field-type", 2},
		{"negative sip", strings.Replace(validSIP, "sip: 2", "sip: -2", 1), "field-type", 2},
		{"sip as string", strings.Replace(validSIP, "sip: 2", "sip: F2", 1), "field-type", 2},
		{"NaN points", strings.Replace(validSIP, "version:", "points: .nan\nversion:", 1), "field-type", 11},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan *registry.Document, 1)
			go func() { done <- registry.Parse("evaluations/SIP-2.md", []byte(tt.content)) }()
			var doc *registry.Document
			select {
			case doc = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Parse hangs")
			}
			errs := 0
			found := false
			for _, p := range doc.Problems {
				if p.Severity == registry.SeverityError {
					errs++
				}
				if p.Rule == tt.wantRule && (tt.wantLine == 0 || p.Line == tt.wantLine) {
					found = true
				}
				if p.Message == "" || p.Line < 1 {
					t.Errorf("problem without message or line: %+v", p)
				}
			}
			if tt.wantRule == "" {
				if errs > 0 || doc.SIP == nil {
					t.Fatalf("want no errors, got %v", doc.Problems)
				}
				if doc.SIP.ID != "poaw" || doc.SIP.Number != 2 {
					t.Errorf("parsed %+v", doc.SIP)
				}
				return
			}
			if !found {
				t.Errorf("want [%s] at line %d, got %v", tt.wantRule, tt.wantLine, doc.Problems)
			}
		})
	}
}

func deepBlock(depth int) string {
	var b strings.Builder
	for i := range depth {
		b.WriteString(strings.Repeat("  ", i+1) + "k:\n")
	}
	return b.String()
}

func TestParseKeepsPositions(t *testing.T) {
	t.Parallel()
	doc := registry.Parse("x/SIP-2.md", []byte("\n"+validSIP))
	for field, line := range map[string]int{"sip": 3, "id": 4, "version": 12, "updated_at": 11} {
		if got := doc.Span(field).Line; got != line {
			t.Errorf("Span(%q).Line = %d, want %d", field, got, line)
		}
	}
	if got := doc.Span("missing").Line; got != 2 {
		t.Errorf("absent field points at line %d, want the opening --- at 2", got)
	}
}

func TestParseNormalises(t *testing.T) {
	t.Parallel()
	doc := registry.Parse("SIP-2.md", []byte(validSIP))
	s := doc.SIP
	if want := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC); !s.UpdatedAt.Equal(want) {
		t.Errorf("UpdatedAt = %v, want %v", s.UpdatedAt, want)
	}
	if s.Config.PoAW == nil || s.Config.PoAW.TimeoutSeconds != registry.DefaultPoAWTimeoutSeconds {
		t.Errorf("PoAW default timeout not applied: %+v", s.Config.PoAW)
	}
	if s.Description != "Fetch, sort, hash and submit." {
		t.Errorf("Description = %q", s.Description)
	}
	if len(doc.SHA256()) != 64 {
		t.Errorf("SHA256 = %q", doc.SHA256())
	}
	// The digest is of the bytes as stored, so CRLF is a change.
	crlf := registry.Parse("SIP-2.md", bytes.ReplaceAll([]byte(validSIP), []byte("\n"), []byte("\r\n")))
	if crlf.SHA256() == doc.SHA256() {
		t.Error("CRLF file has the same digest as the LF file")
	}
}

func TestRawConfig(t *testing.T) {
	t.Parallel()
	doc := registry.Parse("SIP-2.md", []byte(sipWith("live_class_work", "collaboration_handler",
		"  min_participants: 2\n  duration_minutes: 5\n  extra: {a: [1, 2.5, true, null, x]}\n")))
	got := doc.RawConfig()
	want := map[string]any{"min_participants": int64(2), "duration_minutes": int64(5),
		"extra": map[string]any{"a": []any{int64(1), 2.5, true, nil, "x"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if registry.Parse("SIP-2.md", []byte(validSIP)).RawConfig() != nil {
		t.Error("no config must give nil")
	}
}
