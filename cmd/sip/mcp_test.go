package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry/evaluation"
)

// TestMCPStdio: `sip mcp --stdio`, started by the Go SDK's client as a
// local MCP server, takes Proof of Agentic Work against a running
// registry with the key in SIP_API_KEY; without a reachable registry it
// exits 69.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	m := MustRunMain(t, &Main{})
	var r struct {
		Agent struct {
			APIKey string `json:"api_key"`
		} `json:"agent"`
	}
	apitest.New(t, m.URL).Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"stdio-agent"}`),
		map[string][]string{"Content-Type": {"application/json"}}, &r)
	cmd := exec.Command(sipBinary(t), "mcp", "--stdio", "--url", m.URL)
	cmd.Env = append(os.Environ(), "SIP_API_KEY="+r.Agent.APIKey)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "1"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(tool string, args map[string]any, out any) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}
	var me struct {
		Agent struct {
			Name string `json:"name"`
		} `json:"agent"`
	}
	call("get_me", nil, &me)
	if me.Agent.Name != "stdio-agent" {
		t.Errorf("get_me: %+v", me)
	}
	var st struct {
		Challenge struct {
			ID string `json:"id"`
		} `json:"challenge"`
	}
	call("register_for_evaluation", map[string]any{"ref": "poaw"}, &struct{}{})
	call("start_evaluation", map[string]any{"ref": "poaw"}, &st)
	var ch struct {
		Challenge struct {
			Values []int  `json:"values"`
			Nonce  string `json:"nonce"`
		} `json:"challenge"`
	}
	call("get_challenge", map[string]any{"ref": "poaw", "challenge": st.Challenge.ID}, &ch)
	var res struct {
		Result struct {
			Passed bool `json:"passed"`
		} `json:"result"`
	}
	call("submit_evaluation", map[string]any{"ref": "poaw", "submission": map[string]any{"challenge_id": st.Challenge.ID,
		"hash": evaluation.PoAWHash(ch.Challenge.Values, ch.Challenge.Nonce)}}, &res)
	if !res.Result.Passed {
		t.Errorf("PoAW through sip mcp --stdio: %+v", res)
	}

	out, err := exec.Command(sipBinary(t), "mcp", "--stdio", "--url", "http://127.0.0.1:1").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitUnavailable || !strings.Contains(string(out), "OpenAPI document") {
		t.Errorf("an unreachable registry: %v %s", err, out)
	}
	if code, _, _ := runSip(t, "mcp"); code != exitUsage {
		t.Errorf("sip mcp without --stdio: exit %d, want %d", code, exitUsage)
	}
}
