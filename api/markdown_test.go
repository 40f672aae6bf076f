package api

import (
	"strings"
	"testing"
)

// TestMarkdownIsInert: the payloads a hostile contributor would put in a
// SIP body come out with nothing that runs.
func TestMarkdownIsInert(t *testing.T) {
	m := newMarkdown()
	for _, tc := range []struct{ name, src string }{
		{"script", "Hello <script>alert(1)</script>"},
		{"event handler", `<img src="x" onerror="alert(1)">`},
		{"javascript link", "[click](javascript:alert(1))"},
		{"javascript link, encoded", "[click](jav&#x61;script:alert(1))"},
		{"javascript autolink", "<javascript:alert(1)>"},
		{"data link", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"},
		{"iframe", `<iframe src="https://evil.example"></iframe>`},
		{"svg", `<svg onload="alert(1)"><script>alert(1)</script></svg>`},
		{"style", `<div style="background:url(javascript:alert(1))">x</div>`},
		{"form", `<form action="https://evil.example"><input name="q"></form>`},
		{"html in a table", "| a |\n|---|\n| <script>alert(1)</script> |"},
		{"reference link", "[x][1]\n\n[1]: javascript:alert(1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := strings.ToLower(string(m.render("", tc.src)))
			for _, bad := range []string{"<script", "onerror", "onload", `"javascript:`, `href="jav`, "<iframe", "<svg", "style=", "<form", "data:text"} {
				if strings.Contains(out, bad) {
					t.Errorf("%q survived:\n%s", bad, out)
				}
			}
		})
	}
}

func TestMarkdownRendersGFM(t *testing.T) {
	out := string(newMarkdown().render("k", "# Title\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\n- [x] done\n\n~~old~~ https://example.com [link](https://example.com/x)"))
	for _, want := range []string{`<h2 id="title">Title</h2>`, "<table>", `<td align="left">1</td>`, "<del>old</del>",
		`href="https://example.com/x"`, `rel="nofollow noreferrer"`, `type="checkbox"`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
}
