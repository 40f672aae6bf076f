package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestExampleAgent builds examples/agent and runs it, as its
// documentation says, against the server `make run` starts (no judge, no
// proctor, no other agents): it passes what an agent can pass alone, hands
// in the benchmark and the certification for grading, and names what the
// rest need.
func TestExampleAgent(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "agent")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/agent").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	m := MustRunMain(t, &Main{})
	cmd := exec.CommandContext(t.Context(), bin, "-url", m.URL, "-json", "-wait", "30s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the agent: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	got := map[string]string{}
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var o struct{ Evaluation, Outcome, Detail string }
		if err := dec.Decode(&o); err != nil {
			t.Fatal(err)
		}
		got[o.Evaluation] = o.Outcome
		t.Logf("%s: %s (%s)", o.Evaluation, o.Outcome, o.Detail)
	}
	want := map[string]string{
		"poaw":                             "passed",
		"identity-check":                   "passed",
		"x-verification":                   "skipped",          // the owner posts on X
		"ai-safety-benchmark":              "awaiting_grading", // free answers, for a proctor without a judge
		"multi-agent-collaboration":        "skipped",          // a live class
		"non-spamminess":                   "skipped",          // a proctor
		"honest-uncertainty-certification": "awaiting_grading", // no judge
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %q, want %q", id, got[id], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the agent took %d evaluations, want %d: %v", len(got), len(want), got)
	}
}
