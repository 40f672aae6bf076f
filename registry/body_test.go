package registry_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
)

// bodySIP is a valid SIP with the given Markdown body.
func bodySIP(body string) registry.File {
	head := validSIP[:strings.Index(validSIP, "---\n\n#")+4]
	return registry.File{Path: "evaluations/SIP-2.md", Content: []byte(head + body)}
}

func rulesOf(ps []registry.Problem, prefix string) []string {
	var out []string
	for _, p := range ps {
		if strings.HasPrefix(p.Rule, prefix) {
			out = append(out, fmt.Sprintf("%s@%d:%d", p.Rule, p.Line, p.Column))
		}
	}
	return out
}

func TestBodyRules(t *testing.T) {
	t.Parallel()
	const ok = "# Proof of Agentic Work\n\n## How it runs\n\nFetch.\n\n## Passing\n\nIn time.\n"
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"a good body", ok, nil},
		{"no title", "## How it runs\n\nFetch.\n\n## Passing\n\nIn time.\n", []string{"body-title@15:1"}},
		{"two titles", ok + "\n# Another\n", []string{"body-title@25:1"}},
		{"a title that names something else", strings.Replace(ok, "Proof of Agentic Work", "Something Else", 1), []string{"body-title@15:1"}},
		{"SIP-N before the name", strings.Replace(ok, "# Proof", "# SIP-2: Proof", 1), nil},
		{"sections in any case", strings.NewReplacer("How it runs", "HOW IT RUNS", "Passing", "Scoring").Replace(ok), nil},
		{"sections as a reader names them", strings.NewReplacer("How it runs", "3. Procedure (Proctor Script)", "Passing", "Passing Criteria:").Replace(ok), nil},
		{"a section named by another's first word only", strings.NewReplacer("Passing", "Pass").Replace(ok), []string{"body-sections@15:1"}},
		{"a title with a parenthetical", strings.Replace(ok, "# Proof of Agentic Work", "# Proof of Agentic Work (SIP-2)", 1), nil},
		{"a title differing in punctuation", strings.Replace(ok, "# Proof of Agentic Work", "# Proof-of-Agentic-Work!", 1), nil},
		{"a section missing", "# Proof of Agentic Work\n\n## How it runs\n\nFetch.\n", []string{"body-sections@15:1"}},
		{"an anchor of this file", ok + "\nSee [how](#how-it-runs).\n", nil},
		{"a broken anchor", ok + "\nSee [how](#how-it-works).\n", []string{"body-links@25:6"}},
		{"an explicit anchor", ok + "\n<a name=\"x-1\"></a>\n\nSee [x](#x-1).\n", nil},
		{"a duplicate heading's anchor", ok + "\n## Passing\n\nSee [the second](#passing-1).\n", nil},
		{"external links are not followed", ok + "\n[a](https://example.org/x#y) [b](mailto:a@b.c) [c](//cdn/x)\n", nil},
		{"a link inside code is not a link", ok + "\n`[a](#nowhere)`\n\n```\n[b](#nowhere)\n```\n", nil},
		{"a link to a file that is missing", ok + "\nSee [notes](notes.md).\n", []string{"body-links@25:6"}},
		{"a link to a file that exists", ok + "\nSee [the other SIP](SIP-3.md) and [its scoring](SIP-3.md#scoring).\n", nil},
		{"a link to another SIP's missing anchor", ok + "\nSee [its rules](SIP-3.md#rules).\n", []string{"body-links@25:6"}},
		{"a root-relative link", ok + "\n[policy](/evaluations/SIP-3.md)\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := registry.File{Path: "evaluations/SIP-3.md", Content: []byte(strings.NewReplacer("sip: 2", "sip: 3", "id: poaw", "id: other",
				"## Passing", "## Scoring").Replace(string(bodySIP(ok).Content)))}
			docs := registry.ParseFiles([]registry.File{bodySIP(tc.body), other})
			opts := registry.Options{Dir: "evaluations"}
			opts.Body.Exists = func(p string) (bool, bool) { return p == "evaluations/SIP-3.md", true }
			got := rulesOf(registry.Validate(docs, opts), "body-")
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBodyWithTenThousandLinks: a body of 10,000 broken links, each in
// a paragraph of its own (in one paragraph they would be over
// body-too-complex's limit), is checked in linear time and reports a
// bounded number of problems, the last counting the rest.
func TestBodyWithTenThousandLinks(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("# Proof of Agentic Work\n\n## How it runs\n\n## Passing\n\n")
	for i := range 10_000 {
		fmt.Fprintf(&b, "[link %d](#nowhere-%d)\n\n", i, i)
	}
	docs := registry.ParseFiles([]registry.File{bodySIP(b.String())})
	start := time.Now()
	ps := registry.Validate(docs, registry.Options{})
	took := time.Since(start)
	links := 0
	for _, p := range ps {
		if p.Rule == "body-links" {
			links++
		}
	}
	if links != 21 || !strings.Contains(ps[len(ps)-1].Message, "and 9,980 more broken links") {
		t.Errorf("%d body-links problems, last %q; want 20 and one counting 9,980 more", links, ps[len(ps)-1].Message)
	}
	// Not a timing assertion on a busy machine: a generous bound that
	// only quadratic work would break.
	if took > 20*time.Second {
		t.Errorf("validating 10,000 links took %v", took)
	}
}

func FuzzBody(f *testing.F) {
	for _, s := range []string{"# T\n", "[a](#b)\n", "| a | ids |\n|---|---|\n| x | `a-b` |\n", "<a name=\"x\">[y](#x)</a>\n", "#\n##\n[](", "`x`[a](b.md#c)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		docs := registry.ParseFiles([]registry.File{bodySIP(body)})
		for _, p := range registry.Validate(docs, registry.Options{}) {
			if p.Line < 1 || p.Column < 0 {
				t.Fatalf("problem without a place: %+v", p)
			}
		}
	})
}

func TestLinkHintFitsTheLink(t *testing.T) {
	t.Parallel()
	const ok = "# Proof of Agentic Work\n\n## How it runs\n\nSee [a](%s).\n\n## Passing\n\nIn time.\n"
	for _, tc := range []struct{ dest, hint string }{
		{"/docs/none.md", "Correct the path: a link starting with / is relative to the repository's root."},
		{"none.md", "Correct the path: it is relative to evaluations/."},
	} {
		t.Run(tc.dest, func(t *testing.T) {
			opts := registry.Options{}
			opts.Body.Exists = func(string) (bool, bool) { return false, true }
			ps := registry.Validate(registry.ParseFiles([]registry.File{bodySIP(fmt.Sprintf(ok, tc.dest))}), opts)
			if len(ps) != 1 || ps[0].Hint != tc.hint {
				t.Errorf("got %v, want one problem with hint %q", ps, tc.hint)
			}
		})
	}
}
