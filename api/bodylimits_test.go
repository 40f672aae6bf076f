package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// costlyBodies are Markdown that made goldmark take seconds or gigabytes:
// a table padded to 16 million cells (53 KB) and unclosed link
// destinations (256 KB).
var costlyBodies = []struct{ name, body string }{
	{"a padded table", strings.Repeat("|a", 1024) + "|\n" + strings.Repeat("|-", 1024) + "|\n" + strings.Repeat("a\n", 16_000)},
	{"unclosed links", strings.Repeat("[a](", 64<<10) + "\n"},
}

// TestValidateRefusesCostlyBodies: through the validate endpoint, such a
// body is a body-too-complex error at its line, found without parsing
// it (the table alone had cost 4.7 GB).
func TestValidateRefusesCostlyBodies(t *testing.T) {
	s := backends["sqlite"](t)
	c := newClient(t, s)
	syncFiles(t, s, "c1", fixture()...)
	draft := string(siptest.SIP(5, "delta", "draft").Content)
	draft += "\n"
	bodyLine := strings.Count(draft, "\n") + 1 // after a blank line
	for _, tc := range costlyBodies {
		t.Run(tc.name, func(t *testing.T) {
			var got validation
			n := api.Allocated(func() {
				resp := c.do("POST", "/api/v1/sips/validate", validateBody(t, draft+tc.body, true), jsonHeader, &got)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
			})
			if got.Valid || !slices.Contains(got.errorRules(), "body-too-complex") {
				t.Fatalf("errors %v, want body-too-complex", got.errorRules())
			}
			for _, p := range got.Problems {
				if p.Rule == "body-too-complex" && (p.Line != bodyLine || p.Hint == "") {
					t.Errorf("got line %d, hint %q; want line %d and a hint", p.Line, p.Hint, bodyLine)
				}
			}
			if limit := uint64(512 << 20); n > limit {
				t.Errorf("the request allocated %d bytes, want at most %d", n, limit)
			}
		})
	}
}

// TestContributePreviewOfCostlyBodies: the web editor's check and
// preview of such a body names the problem, in bounded memory.
func TestContributePreviewOfCostlyBodies(t *testing.T) {
	base := webServer(t, sqlitetest.Open(t))
	b := newBrowser(t, base)
	_, page := b.get("/contribute/new?type=simple_pass_fail")
	csrf := editorForm(t, page)
	for _, tc := range costlyBodies {
		t.Run(tc.name, func(t *testing.T) {
			form := newSIPForm(csrf, "Costly")
			form.Set("body", form.Get("body")+"\n"+tc.body)
			var resp *http.Response
			n := api.Allocated(func() { resp, page = b.post("/contribute", form) })
			if resp.StatusCode != http.StatusOK || !strings.Contains(page, "body-too-complex") {
				t.Errorf("status %d, want 200 and body-too-complex in\n%.2000s", resp.StatusCode, page)
			}
			if limit := uint64(512 << 20); n > limit {
				t.Errorf("the request allocated %d bytes, want at most %d", n, limit)
			}
		})
	}
}
