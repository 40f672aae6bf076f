package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry/siptest"
)

func TestPolicyCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yml")
	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(good, []byte("maintainers: {teams: [octo/editors]}\ntransitions:\n  - {from: draft, to: active, approvals: 2, by: maintainers}\n"), 0o644)
	os.WriteFile(bad, []byte("maintainers: {teams: [octo/editors]}\ntransitions:\n  - {to: final, by: maintainers}\naliases:\n  a: {aliases: [b]}\n  b: {aliases: [a]}\nrequired_aprovals: 2\n"), 0o644)
	if code, out, errOut := runSip(t, "policy", "check", good); code != exitOK {
		t.Errorf("a good policy: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ := runSip(t, "policy", "check", bad)
	if code != exitData {
		t.Errorf("a bad policy: exit %d, want %d", code, exitData)
	}
	for _, want := range []string{
		bad + ":7: field required_aprovals not found (unknown key); did you mean required_approvals?",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Once the unknown key is gone, the meaning is checked, each at its line.
	os.WriteFile(bad, []byte("maintainers: {teams: [octo/editors]}\ntransitions:\n  - {to: final, by: maintainers}\naliases:\n  a: {aliases: [b]}\n  b: {aliases: [a]}\n"), 0o644)
	_, out, _ = runSip(t, "policy", "check", bad)
	for _, want := range []string{bad + `:3: transition to "final" is not a status`, bad + ":5: aliases include each other in a cycle: a → b → a"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestPolicyExplain: for a local change, explain names the rule that
// applies to each SIP, who may approve and what is missing; a simulated
// approval by the SIP's author meets an edit, not an activation.
func TestPolicyExplain(t *testing.T) {
	t.Parallel()
	sip12 := siptest.Set(siptest.SIP(12, "twelve", "draft"), "author: ", "author: Ada (@ada)")
	sip13 := siptest.SIP(13, "thirteen", "draft")
	repo := siptest.NewRepo(t, map[string]string{
		policy.Path: "maintainers: {users: [mia, max]}\nauthors_approve: true\ntransitions:\n  - {from: draft, to: active, approvals: 2, by: maintainers}\n",
		sip12.Path:  string(sip12.Content),
		sip13.Path:  string(sip13.Content),
	})
	evals := filepath.Join(repo, "evaluations")
	if code, out, _ := runSip(t, "policy", "explain", "--base", "HEAD", evals); code != exitOK || !strings.Contains(out, "no approval needed") {
		t.Errorf("no change: exit %d\n%s", code, out)
	}
	edit := siptest.Edit(sip12, "1.0.1", "2026-02-01", "Clearer.")
	siptest.WriteFiles(t, repo, map[string]string{edit.Path: string(edit.Content)})
	code, out, _ := runSip(t, "policy", "explain", "--base", "HEAD", "--author", "bob", "--approved-by", "ada", evals)
	if code != exitOK || !strings.Contains(out, "| SIP-12 | a SIP changed (status kept: its authors may approve) | maintainers: @mia, @max; authors of SIP-12: @ada | @ada | — |") {
		t.Errorf("an edit approved by its author: exit %d\n%s", code, out)
	}
	active := siptest.Set(siptest.Edit(sip13, "1.1.0", "2026-02-01", "Ready."), "status: ", "status: active")
	siptest.WriteFiles(t, repo, map[string]string{active.Path: string(active.Content)})
	code, out, _ = runSip(t, "policy", "explain", "--base", "HEAD", "--author", "bob", "--approved-by", "ada,mia", evals)
	if code != exitData || !strings.Contains(out, "| SIP-13 | status draft → active | maintainers: @mia, @max | @mia | 1 of 2 |") ||
		!strings.Contains(out, "Waiting for 1 approval from maintainers (SIP-13)") {
		t.Errorf("an activation with one maintainer: exit %d\n%s", code, out)
	}
	// An agent's pull request needs a sponsor; an agent's approval does
	// not count; the summary states the agent rules.
	agents := filepath.Join(t.TempDir(), "agents.yml")
	os.WriteFile(agents, []byte("maintainers: {users: [mia, max]}\nagents: {accounts: [devin-ai], sponsors: {users: [sam]}}\n"), 0o644)
	code, out, _ = runSip(t, "policy", "explain", "--base", "HEAD", "--policy", agents, "--author", "devin-ai", "--approved-by", "mia,max", evals)
	if code != exitData || !strings.Contains(out, "a pull request by an agent: a human sponsor") || !strings.Contains(out, "`Assisted-by:` line") {
		t.Errorf("an agent's pull request approved by maintainers only: exit %d\n%s", code, out)
	}
	if _, out, _ := runSip(t, "policy", "explain", "--base", "HEAD", "--policy", agents, "--author", "bob", "--approved-by", "devin-ai", evals); !strings.Contains(out, "@devin-ai: agents' approvals do not count") {
		t.Errorf("an agent's approval:\n%s", out)
	}
	if code, _, errOut := runSip(t, "policy", "explain", "--base", "HEAD", "--policy", filepath.Join(repo, "missing.yml"), evals); code != exitConfig {
		t.Errorf("a missing policy file: exit %d %s", code, errOut)
	}
}

// TestValidateConfig: a repository's policy file sets rule severities for
// sip validate: a rule turned off disappears, a warning becomes an error.
func TestValidateConfig(t *testing.T) {
	t.Parallel()
	dir := copyBundled(t)
	cfg := filepath.Join(t.TempDir(), "sip.yml")
	os.WriteFile(filepath.Join(dir, "SIP-3.md"), []byte(strings.Replace(mustRead(t, filepath.Join(dir, "SIP-3.md")), "## Passing", "## Outcome", 1)), 0o644)
	if code, out, _ := runSip(t, "validate", "--color", "never", dir); code != exitOK || !strings.Contains(out, "warning [body-sections]") {
		t.Fatalf("default: exit %d\n%s", code, out)
	}
	os.WriteFile(cfg, []byte("rules:\n  body-sections: error\n"), 0o644)
	if code, out, _ := runSip(t, "validate", "--color", "never", "--config", cfg, dir); code != exitData || !strings.Contains(out, "error [body-sections]") {
		t.Errorf("body-sections as an error: exit %d\n%s", code, out)
	}
	os.WriteFile(cfg, []byte("rules:\n  body-sections: off\n"), 0o644)
	if code, out, _ := runSip(t, "validate", "--color", "never", "--config", cfg, dir); code != exitOK || strings.Contains(out, "body-sections") {
		t.Errorf("body-sections off: exit %d\n%s", code, out)
	}
	os.WriteFile(cfg, []byte("rules:\n  body-section: off\n"), 0o644)
	if code, _, errOut := runSip(t, "validate", "--config", cfg, dir); code != exitConfig || !strings.Contains(errOut, cfg+":2: rules: \"body-section\"") {
		t.Errorf("an unknown rule: exit %d %s", code, errOut)
	}
}
