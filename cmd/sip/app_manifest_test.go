package main

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/bot/githubtest"
)

// TestAppCreate runs the App manifest flow against the fake GitHub as a
// browser would: open the page sip serves, post its form to GitHub, follow
// GitHub's redirect back; sip exchanges the code and keeps the App's
// credentials in private files that configure sip serve's App.
func TestAppCreate(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	out := filepath.Join(t.TempDir(), "secrets")
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	vars := map[string]string{"SIP_GITHUB_API_URL": gh.URL + "/"}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, env{stdout: stdout, stderr: stderr, getenv: func(k string) string { return vars[k] }},
			[]string{"app", "create", "--url", "https://sip.example.org", "--github", gh.URL, "--org", "octo-org", "--out", out})
	}()
	local := waitFor(t, stdout, regexp.MustCompile(`Open (http://\S+) in your browser`))

	// A request that did not come from sip's page is refused.
	resp, err := http.Get(local + "/callback?state=forged&code=abc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a forged state: %d, want 400", resp.StatusCode)
	}

	resp, err = http.Get(local + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	action := regexp.MustCompile(`action="([^"]+)"`).FindSubmatch(page)
	value := regexp.MustCompile(`name="manifest" value="([^"]+)"`).FindSubmatch(page)
	if action == nil || value == nil {
		t.Fatalf("the page has no form:\n%s", page)
	}
	manifest := html.UnescapeString(string(value[1]))
	var m map[string]any
	if err := json.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatalf("the manifest: %v\n%s", err, manifest)
	}
	if hook := m["hook_attributes"].(map[string]any)["url"]; hook != "https://sip.example.org/webhooks/github" ||
		!strings.HasPrefix(m["redirect_url"].(string), local+"/callback") {
		t.Errorf("manifest hook %v, redirect %v", hook, m["redirect_url"])
	}
	target := html.UnescapeString(string(action[1]))
	if !strings.HasPrefix(target, gh.URL+"/organizations/octo-org/settings/apps/new?state=") {
		t.Errorf("the form posts to %s", target)
	}
	// The browser posts the form to GitHub and follows it back to sip.
	resp, err = http.PostForm(target, url.Values{"manifest": {manifest}})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(done), "/apps/sip-registry/installations/new") {
		t.Fatalf("back from GitHub: %d\n%s", resp.StatusCode, done)
	}
	select {
	case code := <-exit:
		if code != exitOK {
			t.Fatalf("sip app create: exit %d\n%s%s", code, stdout.String(), stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("sip app create did not finish")
	}
	if gh.ManifestCodes() != 0 {
		t.Errorf("the code was not exchanged")
	}

	pem, envFile := filepath.Join(out, "github-app.pem"), filepath.Join(out, "sip-github.env")
	for _, p := range []string{pem, envFile} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v (%v), want mode 0600", p, fi, err)
		}
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, want a 0700 folder", out, err)
	}
	if b, _ := os.ReadFile(pem); string(b) != string(gh.PrivateKey) {
		t.Errorf("the saved key is not the App's")
	}
	// The saved settings configure sip serve's App.
	raw, _ := os.ReadFile(envFile)
	settings := map[string]string{"SIP_GITHUB_REPOSITORY": "octo-org/sips"}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "#") {
			settings[k] = v
		}
	}
	cfg, err := gitHubAppFromEnv(env{getenv: func(k string) string { return settings[k] }})
	if err != nil || cfg == nil || cfg.AppID != gh.AppID || cfg.WebhookSecrets[0] != githubtest.ManifestWebhookSecret {
		t.Fatalf("the saved settings: %+v, %v", cfg, err)
	}
	said := stdout.String() + stderr.String()
	if strings.Contains(said, githubtest.ManifestWebhookSecret) || strings.Contains(said, "PRIVATE KEY") {
		t.Errorf("a secret was printed:\n%s", said)
	}
	if !strings.Contains(said, "installations/new") || !strings.Contains(said, "SIP_GITHUB_REPOSITORY") {
		t.Errorf("the next steps are missing:\n%s", said)
	}

	// A second run will not overwrite the credentials.
	if code, _, errOut := runSip(t, "app", "create", "--url", "https://sip.example.org", "--out", out); code != exitUsage || !strings.Contains(errOut, "exists") {
		t.Errorf("over existing credentials: exit %d %s", code, errOut)
	}
}

// TestAppManifestMatchesTheDocs: the manifest sip registers asks for the
// permissions and events docs/github-app-manifest.json documents.
func TestAppManifestMatchesTheDocs(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/github-app-manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	ours, _ := json.Marshal(appManifest("SIP registry", "https://sip.example.org", "https://sip.example.org/"))
	var got map[string]any
	json.Unmarshal(ours, &got)
	for _, k := range []string{"default_permissions", "default_events", "hook_attributes", "callback_urls", "public", "name", "description"} {
		a, _ := json.Marshal(doc[k])
		b, _ := json.Marshal(got[k])
		if string(a) != string(b) {
			t.Errorf("%s: sip registers %s, the docs say %s", k, b, a)
		}
	}
}

// waitFor polls a command's output, with a generous deadline, until re
// matches, and returns the first group.
func waitFor(t *testing.T, b *lockedBuffer, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s in the output:\n%s", re, b.String())
	return ""
}
