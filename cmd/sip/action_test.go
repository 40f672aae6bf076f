package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/sipregistry/sip/registry/siptest"
)

// TestValidateAction runs the validation step of the composite action
// that repositories without the App use, as GitHub Actions would run it
// on a pull request, against a real git repository.
func TestValidateAction(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../.github/actions/sip-validate/action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Runs struct {
			Using string
			Steps []struct {
				ID, Shell, Run string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &action); err != nil {
		t.Fatal(err)
	}
	var script string
	for _, s := range action.Runs.Steps {
		if s.ID == "validate" {
			script = s.Run
		}
	}
	if action.Runs.Using != "composite" || script == "" {
		t.Fatalf("no validate step in the action: %+v", action)
	}
	one := siptest.SIP(1, "first", "active")
	repo := siptest.NewRepo(t, map[string]string{one.Path: string(one.Content)})
	siptest.Git(t, repo, "update-ref", "refs/remotes/origin/main", "HEAD")
	run := func() (int, string) {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "SIP="+sipBinary(t), "SIP_PATHS=evaluations", "SIP_BASE=", "SIP_BASE_REF=main")
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := run(); code != 0 {
		t.Fatalf("a valid repository: exit %d\n%s", code, out)
	}
	// A pull request that changes a merged SIP without bumping its version.
	edited := siptest.Set(one, "name: ", `name: "Renamed"`)
	siptest.Commit(t, repo, "rename", map[string]string{one.Path: string(edited.Content)})
	code, out := run()
	if code != exitData || !strings.Contains(out, "::error file=evaluations/SIP-1.md,") {
		t.Errorf("an edit without a version bump: exit %d, want %d with an annotation\n%s", code, exitData, out)
	}
}

// TestActionBuildsSipFromItsSource runs the action's source-digest and
// build steps as GitHub Actions would, with the action at this checkout:
// it builds sip from the action's own source (no published module), and
// a second run with the cache restored does not build again.
func TestActionBuildsSipFromItsSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sip")
	}
	t.Parallel()
	steps := actionSteps(t)
	actionPath, err := filepath.Abs("../../.github/actions/sip-validate")
	if err != nil {
		t.Fatal(err)
	}
	runner := t.TempDir()
	step := func(id string, env ...string) map[string]string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "output")
		cmd := exec.Command("bash", "-c", steps[id])
		cmd.Dir = t.TempDir() // the caller's workspace: not sip's source
		cmd.Env = append(os.Environ(), append(env, "GITHUB_ACTION_PATH="+actionPath, "RUNNER_TEMP="+runner, "GITHUB_OUTPUT="+out)...)
		log, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("step %s: %v\n%s", id, err, log)
		}
		raw, _ := os.ReadFile(out)
		outputs := map[string]string{"log": string(log)}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			k, v, _ := strings.Cut(line, "=")
			outputs[k] = v
		}
		return outputs
	}
	src := step("source")
	if root, _ := filepath.Abs("../.."); len(src["digest"]) != 32 || src["root"] != root {
		t.Fatalf("source outputs %v", src)
	}
	if again := step("source"); again["digest"] != src["digest"] {
		t.Errorf("the digest of unchanged source changed: %s then %s", src["digest"], again["digest"])
	}
	built := step("build", "SIP_SOURCE="+src["root"], "SIP_CACHED=")
	if built["sip"] != filepath.Join(runner, "sip-bin", "sip") || !strings.HasPrefix(built["log"], "sip ") {
		t.Fatalf("build outputs %v", built)
	}
	fi, err := os.Stat(built["sip"])
	if err != nil {
		t.Fatal(err)
	}
	// A cache hit: the binary is used as it is.
	cached := step("build", "SIP_SOURCE="+src["root"], "SIP_CACHED=true")
	if fi2, err := os.Stat(cached["sip"]); err != nil || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("a cache hit rebuilt sip: %v", err)
	}
}

// actionSteps reads the run scripts of the action's steps by id.
func actionSteps(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../../.github/actions/sip-validate/action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Runs struct {
			Using string
			Steps []struct {
				ID, Shell, Run, Uses string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &action); err != nil {
		t.Fatal(err)
	}
	if action.Runs.Using != "composite" {
		t.Fatalf("the action is not composite: %+v", action)
	}
	out := map[string]string{}
	for _, s := range action.Runs.Steps {
		if s.ID != "" && s.Run != "" {
			out[s.ID] = s.Run
		}
	}
	return out
}

// TestPreCommitHook runs the pre-commit hook's entry and arguments, as
// pre-commit would in a repository of SIPs, with the sip it would build.
func TestPreCommitHook(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID, Entry, Language, Files string
		Args                       []string
		PassFilenames              *bool `yaml:"pass_filenames"`
	}
	if err := yaml.Unmarshal(raw, &hooks); err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || hooks[0].ID != "sip-validate" || hooks[0].Language != "golang" || hooks[0].PassFilenames == nil || *hooks[0].PassFilenames {
		t.Fatalf("hooks %+v", hooks)
	}
	h := hooks[0]
	one := siptest.SIP(1, "first", "active")
	bad := siptest.Set(siptest.SIP(2, "second", "active"), "name: ", `name: ""`)
	for _, tt := range []struct {
		name  string
		files map[string]string
		code  int
	}{
		{"valid SIPs", map[string]string{one.Path: string(one.Content)}, 0},
		{"an invalid SIP", map[string]string{one.Path: string(one.Content), bad.Path: string(bad.Content)}, exitData},
	} {
		t.Run(tt.name, func(t *testing.T) {
			repo := siptest.NewRepo(t, tt.files)
			entry := strings.Fields(h.Entry)
			if entry[0] != "sip" {
				t.Fatalf("entry %q does not run sip", h.Entry)
			}
			cmd := exec.Command(sipBinary(t), append(entry[1:], h.Args...)...)
			cmd.Dir = repo
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != tt.code {
				t.Errorf("got exit %d, want %d\n%s", cmd.ProcessState.ExitCode(), tt.code, out)
			}
		})
	}
}
