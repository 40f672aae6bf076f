package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry/evaluation"
)

// browser starts headless Chromium (Debian's chromium package; .ci/run
// installs it). Without it the browser tests fail under CI=true and are
// skipped, loudly, elsewhere.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium on PATH (CI=true, so this fails): apt-get install chromium")
		}
		t.Skip("SKIPPING browser tests: no Chromium on PATH. Install Debian's chromium package; CI=true makes this a failure.")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("hide-scrollbars", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// hostileSIP carries script, event-handler and javascript: payloads.
const hostileSIP = `---
sip: 30
id: hostile-body
name: "Hostile Body"
module: core
type: simple_pass_fail
status: draft
author: Mallory
created_at: 2026-01-01
updated_at: 2026-01-01
version: "1.0.0"
points: 1
executable:
  handler: identity_check_handler
---

# Hostile Body

<script>alert('script')</script>
<img src="x" onerror="alert('onerror')">
<a href="javascript:alert('link')" onclick="alert('click')">raw link</a>

[markdown link](javascript:alert('md'))

| a |
|---|
| <iframe src="javascript:alert('frame')"></iframe> |
`

// passPoAW drives the API as an outside agent: register, start, fetch,
// answer. It returns the agent's API key.
func passPoAW(t *testing.T, base, name string) string {
	key, _ := passPoAWResult(t, base, name)
	return key
}

// passPoAWResult is passPoAW, also returning the passing result's id.
func passPoAWResult(t *testing.T, base, name string) (key, resultID string) {
	t.Helper()
	call := func(method, path, key, body string, out any) int {
		url := base + path
		if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
			url = path // the API hands out absolute links (fetch_url)
		}
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	var reg struct {
		Agent struct {
			APIKey string `json:"api_key"`
		} `json:"agent"`
	}
	if code := call("POST", "/api/v1/agents/register", "", fmt.Sprintf(`{"name":%q,"description":"Takes evaluations in a browser test."}`, name), &reg); code != 201 {
		t.Fatalf("register agent: %d", code)
	}
	key = reg.Agent.APIKey
	if code := call("POST", "/api/v1/evaluations/poaw/register", key, "", nil); code != 201 {
		t.Fatalf("register for poaw: %d", code)
	}
	var st struct {
		Challenge struct {
			ID       string `json:"id"`
			FetchURL string `json:"fetch_url"`
		} `json:"challenge"`
	}
	if code := call("POST", "/api/v1/evaluations/poaw/start", key, "", &st); code != 201 {
		t.Fatalf("start: %d", code)
	}
	var ch struct {
		Challenge struct {
			Values []int  `json:"values"`
			Nonce  string `json:"nonce"`
		} `json:"challenge"`
	}
	if !strings.HasPrefix(st.Challenge.FetchURL, base+"/") {
		t.Fatalf("fetch_url = %q, want an absolute URL on %s", st.Challenge.FetchURL, base)
	}
	if code := call("GET", st.Challenge.FetchURL, key, "", &ch); code != 200 {
		t.Fatalf("fetch: %d", code)
	}
	body := fmt.Sprintf(`{"challenge_id":%q,"hash":%q}`, st.Challenge.ID, evaluation.PoAWHash(ch.Challenge.Values, ch.Challenge.Nonce))
	var res struct {
		Result struct {
			ID     string `json:"id"`
			Passed bool   `json:"passed"`
		} `json:"result"`
	}
	if code := call("POST", "/api/v1/evaluations/poaw/submit", key, body, &res); code != 201 || !res.Result.Passed {
		t.Fatalf("submit: %d %+v", code, res)
	}
	return key, res.Result.ID
}

// TestBrowser drives the pages in headless Chromium the way a person
// would: from the front page to an evaluation and its prerequisites, to
// the profile of an agent that passed Proof of Agentic Work through the
// API, with its badge; keyboard first; and a hostile SIP stays inert.
// With SIP_SCREENSHOTS=DIR it saves screenshots of every page there
// (make screenshots).
func TestBrowser(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	dir := t.TempDir()
	fs.WalkDir(evaluations.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(p, "SIP-") {
			b, _ := fs.ReadFile(evaluations.FS, p)
			os.WriteFile(filepath.Join(dir, p), b, 0o644)
		}
		return err
	})
	os.WriteFile(filepath.Join(dir, "SIP-30.md"), []byte(hostileSIP), 0o644)
	m := MustRunMain(t, &Main{EvaluationsDir: dir})
	passPoAW(t, m.URL, "ada-lovelace")

	var dialogs atomic.Int32
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
			t.Errorf("a script ran and opened a dialog: %q", d.Message)
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(true))
		}
	})

	var text, focused, href string
	var scripts, handlers, jsLinks int
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// The front page, by keyboard: the first Tab reaches the skip link.
	run("open /", chromedp.Navigate(m.URL+"/"), chromedp.WaitVisible("main h1", chromedp.ByQuery),
		chromedp.KeyEvent("\t"), chromedp.Evaluate(`document.activeElement.textContent`, &focused))
	if focused != "Skip to content" {
		t.Errorf("first Tab focuses %q, want the skip link", focused)
	}
	run("front page text", chromedp.Text("main", &text))
	if !strings.Contains(text, "Proof of Agentic Work") || !strings.Contains(text, "ada-lovelace") {
		t.Errorf("the front page lacks the evaluations or the recent pass:\n%.500s", text)
	}
	// Follow an evaluation that has a prerequisite.
	run("follow AI Safety Benchmark", chromedp.Click(`//a[normalize-space()="AI Safety Benchmark"]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`section[aria-labelledby="prereqs"]`), chromedp.Text(`section[aria-labelledby="prereqs"]`, &text), chromedp.Location(&href))
	if !strings.HasSuffix(href, "/evaluations/SIP-5") || !strings.Contains(text, "Proof of Agentic Work") {
		t.Errorf("at %s the prerequisites read %q", href, text)
	}
	// To the prerequisite, then to the agent that passed it, and its badge.
	run("follow the prerequisite", chromedp.Click(`//section[@aria-labelledby="prereqs"]//a[normalize-space()="Proof of Agentic Work"]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`#results`, chromedp.ByID))
	run("follow the agent", chromedp.Click(`//a[normalize-space()="ada-lovelace"]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`#badges`, chromedp.ByID), chromedp.Text(`.badges`, &text, chromedp.ByQuery), chromedp.Location(&href))
	if !strings.HasSuffix(href, "/agents/ada-lovelace") || !strings.Contains(text, "Proof of Agentic Work") {
		t.Errorf("at %s the badges read %q", href, text)
	}
	// The hostile SIP: nothing that runs.
	run("open the hostile SIP", chromedp.Navigate(m.URL+"/evaluations/SIP-30"), chromedp.WaitVisible("article.prose", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('script').length`, &scripts),
		chromedp.Evaluate(`[...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length`, &handlers),
		chromedp.Evaluate(`[...document.querySelectorAll('a[href], iframe, img')].filter(e => /^\s*javascript:/i.test(e.getAttribute('href') || e.getAttribute('src') || '')).length`, &jsLinks),
		chromedp.Sleep(300*time.Millisecond))
	if scripts+handlers+jsLinks != 0 || dialogs.Load() != 0 {
		t.Errorf("the hostile SIP left %d scripts, %d event handlers, %d javascript: links, %d dialogs", scripts, handlers, jsLinks, dialogs.Load())
	}
	// Clicking whatever links are left does nothing either.
	var links int
	run("count the links", chromedp.Evaluate(`document.querySelectorAll('article.prose a').length`, &links))
	for i := range links {
		run("click a hostile link", chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll('article.prose a')[%d].click()`, i), nil),
			chromedp.Sleep(100*time.Millisecond))
	}
	if dialogs.Load() != 0 {
		t.Error("a link of the hostile SIP ran a script")
	}

	// On a phone the enroll table reads as cards: nothing scrolls sideways,
	// each cell says what it is, and the filters narrow it.
	var scrollWidth, rows int
	var label string
	run("the enroll table on a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1)),
		chromedp.Navigate(m.URL+"/evaluations?type=complex_benchmark"), chromedp.WaitVisible("main table", chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollWidth),
		chromedp.Evaluate(`getComputedStyle(document.querySelector('table.stack td[data-label="Points"]'), '::before').content`, &label),
		chromedp.Evaluate(`document.querySelector("main table tbody").textContent`, &text),
		chromedp.Evaluate(`document.querySelectorAll("main table tbody tr").length`, &rows))
	if scrollWidth > 390 || label != `"Points: "` {
		t.Errorf("on a 390 px phone the page is %d px wide and a cell is labelled %q", scrollWidth, label)
	}
	if rows != 1 || !strings.Contains(text, "AI Safety Benchmark") {
		t.Errorf("the type filter shows %d rows:\n%s", rows, strings.Join(strings.Fields(text), " "))
	}
	run("back to a wide screen", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))

	// Search from the navigation, by keyboard, and follow a hit.
	run("search from the navigation", chromedp.Navigate(m.URL+"/"), chromedp.WaitVisible("#nav-q", chromedp.ByID),
		chromedp.SendKeys("#nav-q", "safety\n", chromedp.ByID), chromedp.WaitVisible(`#sip-hits`, chromedp.ByID),
		chromedp.Location(&href), chromedp.Text(`ol.hits`, &text, chromedp.ByQuery))
	if !strings.Contains(href, "/search?q=safety") || !strings.Contains(text, "AI Safety Benchmark") {
		t.Errorf("searching from the navigation went to %s and found %q", href, text)
	}
	run("follow a hit", chromedp.Click(`//ol[@class="hits"]//a[contains(., "AI Safety Benchmark")]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`#facts`, chromedp.ByID), chromedp.Location(&href))
	if !strings.HasSuffix(href, "/evaluations/SIP-5") {
		t.Errorf("the hit led to %s", href)
	}
	run("search for the agent", chromedp.Navigate(m.URL+"/search?q=ada"), chromedp.WaitVisible(`#agent-hits`, chromedp.ByID),
		chromedp.Text(`section[aria-labelledby="agent-hits"]`, &text, chromedp.ByQuery))
	if !strings.Contains(text, "ada-lovelace") {
		t.Errorf("searching for ada finds %q", text)
	}

	// A chart page: the charts are drawn (without scripts), named for
	// screen readers, and the figures are there as a table too.
	var charts, drawn int
	var chartName string
	run("the statistics of PoAW", chromedp.Navigate(m.URL+"/evaluations/SIP-2/stats"), chromedp.WaitVisible("svg.chart", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('svg.chart[role="img"]').length`, &charts),
		chromedp.Evaluate(`[...document.querySelectorAll('svg.chart rect.bar')].filter(r => r.getBoundingClientRect().height > 0).length`, &drawn),
		chromedp.Evaluate(`document.getElementById(document.querySelector('svg.chart').getAttribute('aria-labelledby').split(' ')[0]).textContent`, &chartName),
		chromedp.Evaluate(`document.querySelectorAll('script').length`, &scripts),
		chromedp.Text(`#first`, &text, chromedp.ByID))
	if charts == 0 || drawn == 0 || chartName == "" || scripts != 0 {
		t.Errorf("the statistics page has %d charts with %d bars drawn, named %q, and %d scripts", charts, drawn, chartName, scripts)
	}
	run("the first passes", chromedp.Text(`section[aria-labelledby="first"]`, &text, chromedp.ByQuery))
	if !strings.Contains(text, "ada-lovelace") {
		t.Errorf("the first passes read %q", text)
	}

	// On a phone, the new pages do not scroll sideways either.
	for _, path := range []string{"/evaluations/SIP-2/stats", "/stats", "/search?q=proof", "/docs/api", "/docs/quickstart"} {
		run("open "+path+" on a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1)),
			chromedp.Navigate(m.URL+path), chromedp.WaitVisible("main h1", chromedp.ByQuery),
			chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollWidth))
		if scrollWidth > 390 {
			t.Errorf("on a 390 px phone %s is %d px wide", path, scrollWidth)
		}
	}
	run("back to a wide screen", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)))

	if out := os.Getenv("SIP_SCREENSHOTS"); out != "" {
		screenshots(t, ctx, m.URL, out)
	}
}

// screenshots saves every page, full length, on a wide screen and on a
// phone.
func screenshots(t *testing.T, ctx context.Context, base, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{"home": "/", "evaluations": "/evaluations", "evaluation": "/evaluations/SIP-5", "agents": "/agents",
		"agent": "/agents/ada-lovelace", "not-found": "/no/such/page", "evaluation-stats": "/evaluations/SIP-2/stats", "stats": "/stats",
		"search": "/search?q=proof", "docs-api": "/docs/api", "docs-quickstart": "/docs/quickstart"}
	var res struct {
		Results []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	if resp, err := http.Get(base + "/api/v1/evaluations/poaw/results"); err == nil {
		json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
	}
	if len(res.Results) > 0 {
		pages["result"] = "/results/" + res.Results[0].ID
	}
	for name, path := range pages {
		for _, size := range []struct {
			suffix string
			w, h   int64
			mobile bool
		}{{"wide", 1280, 900, false}, {"phone", 390, 844, true}} {
			t.Run(size.suffix, func(t *testing.T) {
				var png []byte
				shot := chromedp.FullScreenshot(&png, 100)
				if name == "docs-api" { // too long for one image: its first screen
					shot = chromedp.CaptureScreenshot(&png)
				}
				err := chromedp.Run(ctx, chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateScale(1)),
					chromedp.Navigate(base+path), chromedp.WaitVisible("main", chromedp.ByQuery), shot)
				if err != nil {
					t.Fatalf("screenshot of %s: %v", path, err)
				}
				file := filepath.Join(dir, name+"-"+size.suffix+".png")
				if err := os.WriteFile(file, png, 0o644); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
	t.Logf("screenshots in %s", dir)
}
