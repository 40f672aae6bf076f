package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/registry/siptest"
)

// TestNewSkipsNumbersOfOpenPullRequests: with --github, sip new does not
// pick a number that an open pull request adds, on the fake GitHub.
func TestNewSkipsNumbersOfOpenPullRequests(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	repo := gh.CreateRepo("octo-org", "sips", map[string]string{"README.md": "SIPs\n"})
	held := siptest.SIP(12, "held-twelve", "draft")
	gh.Push(repo, "add-12", map[string]string{held.Path: string(held.Content)})
	gh.OpenPull(repo, "add-12", "ann")
	dir := t.TempDir()
	for _, n := range []string{"SIP-2.md", "SIP-3.md"} {
		b, err := os.ReadFile(filepath.Join(bundled, n))
		if err != nil || os.WriteFile(filepath.Join(dir, n), b, 0o644) != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"GITHUB_TOKEN": gh.UserToken(repo), "SIP_GITHUB_API_URL": gh.URL + "/"}
	var out, errOut bytes.Buffer
	code := run(t.Context(), env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }},
		[]string{"new", "--name", "Next One", "--type", "simple_pass_fail", "--dir", dir, "--author", "Ada", "--github", "octo-org/sips"})
	if code != exitOK || !strings.HasSuffix(strings.TrimSpace(out.String()), "SIP-13.md") {
		t.Errorf("sip new = %d %q %q; want SIP-13.md, past the open pull request's SIP-12", code, out.String(), errOut.String())
	}
	code = run(t.Context(), env{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }},
		[]string{"new", "--name", "Other", "--type", "simple_pass_fail", "--dir", dir, "--github", "octo-org/sips"})
	if code != exitConfig {
		t.Errorf("--github without a token = %d, want %d", code, exitConfig)
	}
	for _, tt := range []struct {
		name, repo, token string
		code              int
	}{
		{"not owner/name", "sips", "x", exitUsage},
		{"too many parts", "a/b/c", "x", exitUsage},
		{"a token GitHub refuses", "octo-org/sips", "ghs_wrong", exitUnavailable},
		{"an unknown repository", "octo-org/nope", gh.UserToken(repo), exitUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			vars := map[string]string{"GITHUB_TOKEN": tt.token, "SIP_GITHUB_API_URL": gh.URL}
			code := run(t.Context(), env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }},
				[]string{"new", "--name", "Refused", "--type", "simple_pass_fail", "--dir", dir, "--author", "Ada", "--github", tt.repo})
			if code != tt.code || out.Len() != 0 {
				t.Errorf("sip new = %d, wrote %q (%s); want %d and no file", code, out.String(), errOut.String(), tt.code)
			}
			if strings.Contains(errOut.String(), tt.token) && tt.token != "x" {
				t.Errorf("the error shows the token: %s", errOut.String())
			}
		})
	}
}
