package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
)

// TestBrowserContribute: the editor checks and previews as its author
// types (its one script, under the site's policy), fits a 390 px phone
// and a 1280 px screen, and works the same without JavaScript.
func TestBrowserContribute(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	m := MustRunMain(t, &Main{})
	run := func(t *testing.T, what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	var text string
	var scrollWidth int
	for _, size := range []struct {
		name string
		w, h int64
	}{{"wide", 1280, 900}, {"phone", 390, 844}} {
		t.Run(size.name, func(t *testing.T) {
			// With the script: typing is enough.
			run(t, "open the editor", chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateScale(1)),
				chromedp.Navigate(m.URL+"/contribute/new?type=simple_pass_fail"), chromedp.WaitVisible("#f-id", chromedp.ByID))
			run(t, "type", chromedp.SendKeys("#f-id", "greeting", chromedp.ByID), chromedp.SendKeys("#f-name", "Greeting", chromedp.ByID),
				chromedp.SendKeys("#f-author", "Ada", chromedp.ByID),
				chromedp.WaitVisible(`#results #check`, chromedp.ByQuery), chromedp.Text("#results", &text, chromedp.ByID))
			if !strings.Contains(text, "passes the repository's rules") || !strings.Contains(text, "adds a new SIP") || !strings.Contains(text, "as it would be published") {
				t.Errorf("the live check reads\n%.600s", text)
			}
			run(t, "width", chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollWidth))
			if scrollWidth > int(size.w) {
				t.Errorf("the editor is %d px wide on a %d px screen", scrollWidth, size.w)
			}
			run(t, "a change", chromedp.Navigate(m.URL+"/evaluations/SIP-2"),
				chromedp.Click(`//a[normalize-space()="Propose a change"]`, chromedp.NodeVisible), chromedp.WaitVisible("#file", chromedp.ByID),
				chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollWidth))
			if scrollWidth > int(size.w) {
				t.Errorf("the change editor is %d px wide on a %d px screen", scrollWidth, size.w)
			}
		})
	}

	// Without JavaScript: the button posts the form and the server answers
	// with the check and the preview.
	run(t, "turn scripts off", emulation.SetScriptExecutionDisabled(true), chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1)),
		chromedp.Navigate(m.URL+"/contribute/new?type=simple_pass_fail"), chromedp.WaitVisible("#f-id", chromedp.ByID))
	run(t, "fill and check", chromedp.SendKeys("#f-id", "greeting", chromedp.ByID), chromedp.SendKeys("#f-name", "Greeting", chromedp.ByID),
		chromedp.SendKeys("#f-author", "Ada", chromedp.ByID), chromedp.Click(`button[value="check"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#results #check`, chromedp.ByQuery), chromedp.Text("#results", &text, chromedp.ByID),
		chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollWidth))
	if !strings.Contains(text, "passes the repository's rules") || !strings.Contains(text, "as it would be published") {
		t.Errorf("without JavaScript the check reads\n%.600s", text)
	}
	if dir := os.Getenv("SIP_SCREENSHOTS"); dir != "" {
		var png []byte
		run(t, "screenshot", chromedp.FullScreenshot(&png, 80))
		os.WriteFile(filepath.Join(dir, "contribute-phone.png"), png, 0o644)
	}
	if scrollWidth > 390 {
		t.Errorf("without JavaScript the result is %d px wide on a 390 px phone", scrollWidth)
	}
}

// TestBrowserProposeAsAuthor: a person with a GitHub account and no clone
// signs in on (the fake) GitHub, proposes a new SIP at 1280 px, a change
// to SIP-2 at 390 px, and another new SIP with scripts off; each pull
// request is theirs, from their fork, and gets the App's check, which the
// editor's page of the pull request shows.
func TestBrowserProposeAsAuthor(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	gh := githubtest.New(t)
	files := bundledRepo()
	repo := gh.CreateRepo("octo-org", "sips", files)
	m := MustRunMain(t, &Main{
		GitHub: &bot.Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, WebhookSecrets: []string{"s3cret"}, APIURL: gh.URL, Repository: "octo-org/sips"},
		SignIn: &SignIn{ClientID: gh.ClientID, ClientSecret: gh.ClientSecret, Key: bytes.Repeat([]byte{9}, 32)}, Repository: "octo-org/sips",
		GitHubAPIURL: gh.URL,
	})
	gh.SetWebhook(m.URL+"/webhooks/github", "s3cret")
	gh.SignInAs("ada")
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	width := func(what string, w int64) {
		t.Helper()
		var scrollWidth int64
		run(what+": width", chromedp.Evaluate(`document.documentElement.scrollWidth`, &scrollWidth))
		if scrollWidth > w {
			t.Errorf("%s: %d px wide on a %d px screen", what, scrollWidth, w)
		}
	}
	// checked waits until the editor's page of the pull request it shows
	// (reloading itself) reports the App's check, and returns its number.
	checked := func(what string) int {
		t.Helper()
		var loc string
		run(what+": the pull request's page", chromedp.WaitVisible("#pull-state", chromedp.ByID), chromedp.Location(&loc))
		n, err := strconv.Atoi(loc[strings.LastIndex(loc, "/")+1:])
		if err != nil {
			t.Fatalf("%s: landed on %s", what, loc)
		}
		deadline := time.Now().Add(60 * time.Second)
		for {
			var text string
			run(what+": read", chromedp.Navigate(loc), chromedp.Text("#main", &text, chromedp.ByID))
			if strings.Contains(text, bot.ValidationCheck+": success") {
				if !strings.Contains(text, "@ada") {
					t.Errorf("%s: the page does not name the author:\n%s", what, text)
				}
				return n
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no successful %s check on the editor's page:\n%s", what, bot.ValidationCheck, text)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	// Wide, with the script: a new SIP begun signed out, then signing in
	// on GitHub from the editor, which brings the fields back as a draft.
	run("wide: a new SIP", chromedp.EmulateViewport(1280, 900, chromedp.EmulateScale(1)),
		chromedp.Navigate(m.URL+"/contribute/new?type=simple_pass_fail"), chromedp.WaitVisible("#f-id", chromedp.ByID),
		chromedp.SendKeys("#f-id", "greeting", chromedp.ByID), chromedp.SendKeys("#f-name", "Greeting", chromedp.ByID),
		chromedp.SendKeys("#f-author", "Ada", chromedp.ByID), chromedp.WaitVisible(`#results #check`, chromedp.ByQuery))
	width("wide: the editor", 1280)
	var kept string
	run("wide: sign in from the editor", chromedp.Click("#signin-button", chromedp.ByID), chromedp.WaitVisible(`//strong[normalize-space()="@ada"]`),
		chromedp.WaitVisible("#f-id", chromedp.ByID), chromedp.Value("#f-id", &kept, chromedp.ByID))
	if kept != "greeting" {
		t.Fatalf("after signing in from the editor the id reads %q, want the one typed before", kept)
	}
	width("wide: signed in", 1280)
	run("wide: open the pull request", chromedp.Click("#propose-button", chromedp.ByID))
	first := checked("wide")
	width("wide: the pull request", 1280)

	// A phone: a change to SIP-2 from its page.
	run("phone: a change", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1)), chromedp.Navigate(m.URL+"/evaluations/SIP-2"),
		chromedp.Click(`//a[normalize-space()="Propose a change"]`, chromedp.NodeVisible), chromedp.WaitVisible("#file", chromedp.ByID),
		chromedp.Evaluate(`document.getElementById("file").value += "\nOne more line, proposed from a phone.\n"`, nil))
	width("phone: the change editor", 390)
	run("phone: open the pull request", chromedp.Click("#propose-button", chromedp.ByID))
	second := checked("phone")
	width("phone: the pull request", 390)

	// Without JavaScript: the form is posted by its buttons. The editor
	// offers the next number nobody holds or claims (the first pull
	// request claims one); someone else's pull request takes it before
	// this one is opened: the server says so and offers the next.
	var offered string
	run("no script: a new SIP", emulation.SetScriptExecutionDisabled(true), chromedp.Navigate(m.URL+"/contribute/new?type=simple_pass_fail"),
		chromedp.WaitVisible("#f-id", chromedp.ByID), chromedp.SendKeys("#f-id", "farewell", chromedp.ByID),
		chromedp.SendKeys("#f-name", "Farewell", chromedp.ByID), chromedp.SendKeys("#f-author", "Ada", chromedp.ByID),
		chromedp.Value("#f-sip", &offered, chromedp.ByID))
	if claimed := gh.File(gh.Repo("ada/sips"), gh.Pull(repo, first).HeadRef, "evaluations/SIP-"+offered+".md"); claimed != "" {
		t.Errorf("the editor offers SIP-%s, which pull request #%d claims", offered, first)
	}
	gh.Push(repo, "grace-"+offered, map[string]string{"evaluations/SIP-" + offered + ".md": "grace's\n"})
	gh.OpenPull(repo, "grace-"+offered, "grace")
	run("no script: open it, too late", chromedp.Click("#propose-button", chromedp.ByID), chromedp.WaitVisible("#notice", chromedp.ByID))
	var notice string
	run("no script: the notice", chromedp.Text("#notice", &notice, chromedp.ByID))
	if !strings.Contains(notice, "was taken by another pull request") {
		t.Errorf("no script: the notice reads %q", notice)
	}
	width("no script: the editor", 390)
	run("no script: open the pull request", chromedp.Click("#propose-button", chromedp.ByID))
	third := checked("no script")

	for _, n := range []int{first, second, third} {
		p := gh.Pull(repo, n)
		if p == nil {
			t.Fatalf("no pull request #%d on the fake GitHub", n)
		}
		if p.Author != "ada" {
			t.Errorf("pull request #%d is by %q, want ada", n, p.Author)
		}
		if runs := gh.CheckRuns(gh.HeadSHA(p), bot.ValidationCheck); len(runs) == 0 || runs[len(runs)-1].Conclusion != "success" {
			t.Errorf("pull request #%d: the App's check runs %+v", n, runs)
		}
	}
	if gh.Repo("ada/sips") == nil {
		t.Error("ada, who cannot push, has no fork")
	}
	if dir := os.Getenv("SIP_SCREENSHOTS"); dir != "" {
		var png []byte
		run("screenshot", chromedp.FullScreenshot(&png, 80))
		os.WriteFile(filepath.Join(dir, "contribute-pull-phone.png"), png, 0o644)
	}
}
