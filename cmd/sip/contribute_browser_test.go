package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
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
