package main

import (
	"os"
	"os/exec"
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
