package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry/judge"
)

// TestExampleAgent builds examples/agent and runs it, as its
// documentation says, against the server `make run` starts (no judge, no
// proctor, no other agents): it passes what an agent can pass alone, hands
// in the benchmark and the certification for grading, and names what the
// rest need. An agent its owner has claimed on X passes X verification too.
func TestExampleAgent(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "agent")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/agent").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	want := map[string]string{
		"poaw":                             "passed",
		"identity-check":                   "passed",
		"x-verification":                   "skipped",          // until the owner claims the agent on X
		"ai-safety-benchmark":              "skipped",          // points for fixed answers: claimed agents only
		"multi-agent-collaboration":        "skipped",          // a live class of agents and a proctor
		"non-spamminess":                   "skipped",          // a proctor
		"honest-uncertainty-certification": "awaiting_grading", // a judge
	}
	t.Run("new agent", func(t *testing.T) {
		t.Parallel()
		m := MustRunMain(t, &Main{})
		checkAgentRun(t, want, bin, "-url", m.URL)
	})
	t.Run("claimed agent", func(t *testing.T) {
		t.Parallel()
		// X's oEmbed endpoint, serving the owner's post of the code.
		var code atomic.Pointer[string]
		x := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			json.NewEncoder(w).Encode(map[string]string{"author_url": "https://twitter.com/the_owner",
				"html": `<blockquote class="twitter-tweet"><p>Claiming my agent: ` + *code.Load() + `</p></blockquote>`})
		}))
		t.Cleanup(x.Close)
		m := MustRunMain(t, &Main{OEmbedURL: x.URL})
		c := apitest.New(t, m.URL)
		jsonBody := http.Header{"Content-Type": {"application/json"}}
		var reg struct {
			Agent struct {
				APIKey           string `json:"api_key"`
				ClaimURL         string `json:"claim_url"`
				VerificationCode string `json:"verification_code"`
			} `json:"agent"`
		}
		if r := c.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"claimed-agent"}`), jsonBody, &reg); r.StatusCode != 201 {
			t.Fatalf("register: %d", r.StatusCode)
		}
		code.Store(&reg.Agent.VerificationCode)
		claim, _ := json.Marshal(map[string]string{"claim_token": path.Base(reg.Agent.ClaimURL), "tweet_url": "https://x.com/the_owner/status/1234567890"})
		if r := c.Do("POST", "/api/v1/agents/claim", bytes.NewReader(claim), jsonBody, nil); r.StatusCode != 200 {
			t.Fatalf("claim: %d", r.StatusCode)
		}
		claimed := map[string]string{}
		for id, o := range want {
			claimed[id] = o
		}
		claimed["x-verification"] = "passed"
		claimed["ai-safety-benchmark"] = "awaiting_grading" // free answers, for a judge or a proctor
		checkAgentRun(t, claimed, bin, "-url", m.URL, "-key", reg.Agent.APIKey)
	})
	t.Run("with a judge", func(t *testing.T) {
		t.Parallel()
		// An OpenAI-compatible judge that gives every item full marks.
		item := regexp.MustCompile(`(?m)^## Item (\S+) `)
		js := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Messages []struct{ Content string } `json:"messages"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			var scores []map[string]any
			for _, m := range item.FindAllStringSubmatch(req.Messages[len(req.Messages)-1].Content, -1) {
				scores = append(scores, map[string]any{"prompt_id": m[1], "score": 100, "feedback": "clear"})
			}
			verdict, _ := json.Marshal(map[string]any{"scores": scores, "summary": "fine", "passed": true})
			json.NewEncoder(w).Encode(map[string]any{"model": "fake-judge", "choices": []any{map[string]any{"message": map[string]string{"content": string(verdict)}}}})
		}))
		t.Cleanup(js.Close)
		m := MustRunMain(t, &Main{Judge: &judge.Client{URL: js.URL, Model: "fake-judge"}})
		judged := map[string]string{}
		for id, o := range want {
			judged[id] = o
		}
		judged["honest-uncertainty-certification"] = "passed"
		checkAgentRun(t, judged, bin, "-url", m.URL)
	})
}

// checkAgentRun runs the agent with args and compares its outcome of each
// evaluation with want.
func checkAgentRun(t *testing.T, want map[string]string, bin string, args ...string) {
	t.Helper()
	// A judge's result ends the wait at once; a loaded machine may take a while.
	cmd := exec.CommandContext(t.Context(), bin, append(args, "-json", "-wait", "3m")...)
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
	for id, w := range want {
		if !slices.Contains(strings.Split(w, "|"), got[id]) {
			t.Errorf("%s: %q, want %q", id, got[id], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the agent took %d evaluations, want %d: %v", len(got), len(want), got)
	}
}
