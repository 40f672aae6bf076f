package api_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// browser is a client with cookies, as a person's browser is.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.c.PostForm(b.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// form reads the editor's form: its token and fields as the page shows them.
func editorForm(t *testing.T, page string) url.Values {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no csrf field in\n%s", page)
	}
	return url.Values{"csrf": {m[1]}}
}

func newSIPForm(csrf url.Values, name string) url.Values {
	f := url.Values{"csrf": csrf["csrf"], "mode": {"fields"}, "type": {"simple_pass_fail"}, "sip": {"31"}, "id": {"greeting"},
		"name": {name}, "module": {"core"}, "status": {"draft"}, "author": {"Ada <ada@example.com>"}, "prerequisites": {"poaw"},
		"created_at": {"2026-11-25"}, "updated_at": {"2026-11-25"}, "version": {"0.1.0"}, "points": {"10"},
		"handler": {"identity_check_handler"}, "action": {"check"},
		"body": {"# SIP-31: " + name + "\n\nAn agent greets.\n\n## How it runs\n\nIt says hello.\n\n## Passing\n\nA hello passes.\n"}}
	return f
}

func TestContributeNewSIP(t *testing.T) {
	t.Parallel()
	base := webServer(t, sqlitetest.Open(t))
	b := newBrowser(t, base)

	resp, page := b.get("/contribute")
	if resp.StatusCode != 200 || !strings.Contains(page, `href="/contribute/new?type=complex_benchmark"`) {
		t.Fatalf("chooser: %d\n%s", resp.StatusCode, page)
	}
	resp, page = b.get("/contribute/new?type=complex_benchmark")
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("editor: %d, CSP %q", resp.StatusCode, csp)
	}
	for _, want := range []string{`name="sip" type="number" min="1" value="31"`, "questions:", "choices:", "## How it runs", `<script src="/static/contribute.js" defer></script>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the form lacks %q", want)
		}
	}
	if strings.Count(page, "<script") != 1 {
		t.Error("a script other than the editor's own")
	}
	csrf := editorForm(t, page)

	resp, page = b.post("/contribute", newSIPForm(csrf, "Greeting"))
	if resp.StatusCode != 200 || !strings.Contains(page, `<span class="tag pass">valid</span>`) {
		t.Fatalf("check: %d\n%s", resp.StatusCode, page)
	}
	for _, want := range []string{"adds a new SIP", "<code>poaw</code> (SIP-2, active)", "<code>identity_check_handler</code>",
		"https://github.com/octo-org/sips/new/main?filename=evaluations%2FSIP-31.md&amp;value=",
		`<div class="preview-page">`, "<h1>Greeting</h1>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the result lacks %q", want)
		}
	}

	// Download: the same file, as an attachment.
	form := newSIPForm(csrf, "Greeting")
	form.Set("action", "download")
	resp, file := b.post("/contribute", form)
	if resp.Header.Get("Content-Disposition") != `attachment; filename="SIP-31.md"` {
		t.Errorf("download: %q", resp.Header.Get("Content-Disposition"))
	}
	if d := registry.Parse("evaluations/SIP-31.md", []byte(file)); d.SIP == nil || d.SIP.Name != "Greeting" || d.SIP.Author != "Ada <ada@example.com>" {
		t.Errorf("the downloaded file:\n%s", file)
	}

	// Only the results, for the script.
	form.Set("action", "check")
	form.Set("partial", "1")
	resp, part := b.post("/contribute", form)
	if strings.Contains(part, "<html") || !strings.Contains(part, `id="check"`) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("partial:\n%s", part)
	}

	// A taken number and unknown prerequisite are problems, with lines.
	form = newSIPForm(csrf, "Greeting")
	form.Set("sip", "2")
	form.Set("prerequisites", "nope")
	_, page = b.post("/contribute", form)
	for _, want := range []string{"sip-duplicate", "prerequisite-missing", "the next free number is 31", `<span class="tag fail">unknown</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the result lacks %q", want)
		}
	}
}

// TestContributeHostileFields: script, HTML and YAML built to break the
// generator stay text: escaped in the page, quoted in the file.
func TestContributeHostileFields(t *testing.T) {
	t.Parallel()
	base := webServer(t, sqlitetest.Open(t))
	b := newBrowser(t, base)
	_, page := b.get("/contribute/new?type=simple_pass_fail")
	csrf := editorForm(t, page)
	for _, h := range []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, "a: b\n---\nsip: 99", "&anchor *alias", "'quoted' \"double\""} {
		form := newSIPForm(csrf, h)
		form.Set("author", h)
		form.Set("body", "# SIP-31: x\n\n"+h+"\n\n## How it runs\n\n"+h+"\n\n## Passing\n\n<script>alert(2)</script>\n")
		resp, page := b.post("/contribute", form)
		if resp.StatusCode != 200 {
			t.Fatalf("%q: status %d", h, resp.StatusCode)
		}
		low := strings.ToLower(page)
		if strings.Count(low, "<script") != 1 || strings.Contains(low, "<img src=x") || strings.Contains(low, "onerror=alert") && !strings.Contains(low, "&#34;&gt;&lt;img") {
			t.Errorf("%q reached the page unescaped", h)
		}
		form.Set("action", "download")
		_, file := b.post("/contribute", form)
		d := registry.Parse("evaluations/SIP-31.md", []byte(file))
		if d.SIP == nil || d.SIP.Number != 31 || d.SIP.Name != h || d.SIP.Author != h {
			t.Errorf("%q: the file reads back differently:\n%s", h, file)
		}
	}
	// A config with anchors is refused with a reason, not written.
	form := newSIPForm(csrf, "x")
	form.Set("config", "a: &x 1\nb: *x\n")
	_, page = b.post("/contribute", form)
	if !strings.Contains(page, "anchors and aliases") {
		t.Errorf("anchors taken:\n%s", page)
	}
}

// TestContributeCSRF: a form posted without this browser's token, or
// from another browser, is refused.
func TestContributeCSRF(t *testing.T) {
	t.Parallel()
	base := webServer(t, sqlitetest.Open(t))
	victim := newBrowser(t, base)
	_, page := victim.get("/contribute/new?type=simple_pass_fail")
	token := editorForm(t, page)
	attacker := newBrowser(t, base)
	attacker.get("/contribute/new?type=simple_pass_fail")
	for name, tt := range map[string]struct {
		b    *browser
		form url.Values
	}{
		"no token":                {victim, url.Values{"mode": {"file"}, "file": {"x"}}},
		"a wrong token":           {victim, url.Values{"csrf": {strings.Repeat("A", 43)}, "mode": {"file"}, "file": {"x"}}},
		"another browser's token": {attacker, url.Values{"csrf": token["csrf"], "mode": {"file"}, "file": {"x"}}},
		"no cookie":               {newBrowser(t, base), url.Values{"csrf": token["csrf"], "mode": {"file"}, "file": {"x"}}},
	} {
		t.Run(name, func(t *testing.T) {
			if resp, _ := tt.b.post("/contribute", tt.form); resp.StatusCode != http.StatusForbidden {
				t.Errorf("status %d, want 403", resp.StatusCode)
			}
		})
	}
}

// TestProposeAChange: every SIP page links to the editor and to its
// source file; the editor holds the file with the edit rules applied.
func TestProposeAChange(t *testing.T) {
	t.Parallel()
	base := webServer(t, sqlitetest.Open(t))
	b := newBrowser(t, base)
	_, page := b.get("/evaluations/SIP-2")
	for _, want := range []string{`href="/contribute/edit/SIP-2">Propose a change</a>`,
		`href="https://github.com/octo-org/sips/blob/0123456789abcdef0123456789abcdef01234567/evaluations/SIP-2.md">Source file</a>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the SIP page lacks %q", want)
		}
	}
	resp, page := b.get("/contribute/edit/SIP-2")
	if resp.StatusCode != 200 || !strings.Contains(page, `version: &#34;1.0.1&#34;`) || !strings.Contains(page, "updated_at: 2026-11-25T10:00:00Z") {
		t.Fatalf("editor: %d\n%s", resp.StatusCode, page)
	}
	m := regexp.MustCompile(`(?s)<textarea id="file" name="file"[^>]*>(.*?)</textarea>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no file field")
	}
	file := strings.NewReplacer("&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(m[1])
	form := editorForm(t, page)
	form.Set("mode", "file")
	form.Set("edit", "SIP-2")
	form.Set("file", file+"\nOne more line.\n")
	_, page = b.post("/contribute", form)
	for _, want := range []string{`<span class="tag pass">valid</span>`, "1.0.0 → 1.0.1", "a new version of an existing SIP",
		`href="https://github.com/octo-org/sips/edit/main/evaluations/SIP-2.md"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the result lacks %q", want)
		}
	}
	// The unchanged version is refused as CI refuses it.
	form.Set("file", strings.Replace(file, `"1.0.1"`, `"1.0.0"`, 1)+"\nOne more line.\n")
	if _, page = b.post("/contribute", form); !strings.Contains(page, "version-not-bumped") {
		t.Error("version-not-bumped not reported")
	}
	if resp, _ := b.get("/contribute/edit/SIP-999"); resp.StatusCode != 404 {
		t.Errorf("unknown SIP: %d", resp.StatusCode)
	}
}

// TestContributeLongFile: a file too long for GitHub's new-file link is
// offered as a download and an upload instead.
func TestContributeLongFile(t *testing.T) {
	t.Parallel()
	base := webServer(t, sqlitetest.Open(t))
	b := newBrowser(t, base)
	_, page := b.get("/contribute/new?type=simple_pass_fail")
	form := newSIPForm(editorForm(t, page), "Long")
	form.Set("body", form.Get("body")+strings.Repeat("A long line of prose. ", 600))
	_, page = b.post("/contribute", form)
	if strings.Contains(page, "/new/main?") || !strings.Contains(page, `href="https://github.com/octo-org/sips/upload/main/evaluations"`) {
		t.Errorf("no upload fallback:\n%s", page)
	}
}
