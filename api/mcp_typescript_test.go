package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTypeScriptMCPClient: the official TypeScript SDK's client (npm
// @modelcontextprotocol/sdk, which also holds every structured result to
// its tool's output schema) registers an agent through /mcp and takes
// Proof of Agentic Work and the benchmark, its free answer judged by the
// stand-in judge while the client follows the job. Before the benchmark,
// which takes claimed agents only, the agent asks its owner to claim it
// and waits; the test claims it as its owner would. .ci/run installs the
// SDK where SIP_MCP_TS points; under CI the test fails without it.
// claimRequest is the line the agent writes asking its owner to claim it.
type claimRequest struct {
	ClaimURL         string `json:"claim_url"`
	VerificationCode string `json:"verification_code"`
}

func TestTypeScriptMCPClient(t *testing.T) {
	dir := os.Getenv("SIP_MCP_TS")
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("SIP_MCP_TS is not set: .ci/run installs @modelcontextprotocol/sdk there")
		}
		t.Skip("SKIPPED: SIP_MCP_TS is not set; npm install examples/mcp-typescript somewhere and point SIP_MCP_TS at it")
	}
	script, err := os.ReadFile(filepath.Join("..", "examples", "mcp-typescript", "agent.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// The script resolves the SDK from the folder it sits in.
	agent := filepath.Join(dir, "agent.mjs")
	if err := os.WriteFile(agent, script, 0o644); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, backends["sqlite"](t))
	key, _ := json.Marshal(answerKey(t, "SIP-5.md"))
	answers := filepath.Join(t.TempDir(), "answers.json")
	if err := os.WriteFile(answers, key, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", agent, w.BaseURL, answers)
	cmd.Env = append(os.Environ(), "SIP_AGENT_NAME=ts-mcp-agent")
	var stdout bytes.Buffer
	var stderr lockedBuffer
	cmd.Stdout = &stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The agent asks its owner to claim it on stderr before the
	// benchmark, which takes claimed agents only; the owner does.
	claims := make(chan claimRequest, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			stderr.Write(append(sc.Bytes(), '\n'))
			var c claimRequest
			if json.Unmarshal(sc.Bytes(), &c) == nil && c.ClaimURL != "" {
				claims <- c
			}
		}
	}()
	done := make(chan error, 1)
	go func() {
		<-read // Wait must not close the pipe before it is read
		done <- cmd.Wait()
	}()
	// The judge worker runs while the client follows its job.
	var runErr error
	for waiting := true; waiting; {
		select {
		case runErr = <-done:
			waiting = false
		case c := <-claims:
			a := &testAgent{w: w, name: "ts-mcp-agent", code: c.VerificationCode, claim: c.ClaimURL[strings.LastIndex(c.ClaimURL, "/")+1:]}
			a.claimBy(t, "ts_owner")
		case <-time.After(50 * time.Millisecond):
			if _, err := w.worker.RunOnce(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("judge worker: %v", err)
			}
		}
	}
	if runErr != nil {
		t.Fatalf("node agent.mjs: %v\n%s\n%s", runErr, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	want := []string{
		`{"evaluation":"poaw","outcome":"passed","passed":true}`,
		`{"evaluation":"ai-safety-benchmark","outcome":"passed","passed":true}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("the TypeScript client's results:\n%s\nwant\n%s\n%s", stdout.String(), strings.Join(want, "\n"), stderr.String())
	}
}
