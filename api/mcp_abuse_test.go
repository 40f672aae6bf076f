package api_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sipregistry/sip/registry"
)

// twin is a tool call and the HTTP call it stands for.
type twin struct {
	tool         string
	args         map[string]any
	method, path string
	body         string
}

// sameRefusal holds a tool's refusal to the HTTP API's for the same
// call: the same code, message and hint.
func sameRefusal(t *testing.T, w *world, m *mcpAgent, key, what string, c twin) {
	t.Helper()
	got := m.call(c.tool, c.args, nil)
	h := http.Header{"Content-Type": {"application/json"}}
	if key != "" {
		h = bearer(key)
	}
	var body io.Reader = strings.NewReader(c.body)
	var want mcpError
	resp := w.Do(c.method, c.path, body, h, &want)
	switch {
	case resp.StatusCode < 400:
		t.Errorf("%s: the HTTP call succeeded (%d); the case is wrong", what, resp.StatusCode)
	case got == nil:
		t.Errorf("%s: %s succeeded; HTTP refuses it with %s", what, c.tool, want.ErrorDetail.Code)
	case got.ErrorDetail.Code != want.ErrorDetail.Code || got.Error != want.Error || got.Hint != want.Hint:
		t.Errorf("%s: MCP refused with %s (%q, %q), HTTP with %s (%q, %q)", what, got.ErrorDetail.Code, got.Error, got.Hint,
			want.ErrorDetail.Code, want.Error, want.Hint)
	}
}

// TestMCPRefusesWhatHTTPRefuses: calls without a key, with a forged or
// rotated key, and with another agent's ids in every tool that takes one
// are refused through MCP exactly as over HTTP; malformed, oversized
// and unknown arguments, unknown tools and path tricks are refused
// before anything is called; on both stores.
func TestMCPRefusesWhatHTTPRefuses(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		owner, ownerHTTP := w.registerMCP(t, "mcp-owner")
		ownerHTTP.asCandidate(t) // the benchmark takes claimed agents only
		other, otherHTTP := w.registerMCP(t, "mcp-other")
		buddy, _ := w.registerMCP(t, "mcp-buddy")

		// The owner's ids: an open challenge, a judging job, a live session.
		pass := owner.poawMCP(t).Result.ID
		owner.must("update_me", a{"results_public": false}, nil) // its results are its own now
		owner.must("register_for_evaluation", a{"ref": "poaw"}, nil)
		var st struct {
			Challenge struct {
				ID string `json:"id"`
			} `json:"challenge"`
		}
		owner.must("start_evaluation", a{"ref": "poaw"}, &st)
		challenge := st.Challenge.ID
		owner.must("register_for_evaluation", a{"ref": "ai-safety-benchmark"}, nil)
		var bq struct {
			Questions []struct {
				ID      string   `json:"id"`
				Choices []string `json:"choices"`
			} `json:"questions"`
		}
		owner.must("start_evaluation", a{"ref": "ai-safety-benchmark"}, &bq)
		answers := a{}
		for _, q := range bq.Questions {
			answers[q.ID] = "I do not know."
		}
		var job struct {
			JobID string `json:"job_id"`
		}
		owner.must("submit_evaluation", a{"ref": "ai-safety-benchmark", "submission": a{"answers": answers}}, &job)
		var seat liveStart
		for _, p := range []*mcpAgent{owner, buddy} {
			p.must("register_for_evaluation", a{"ref": "live-ten"}, nil)
			p.must("start_evaluation", a{"ref": "live-ten"}, &seat)
		}
		sess := seat.Session.ID
		const ev = "/api/v1/evaluations/"

		t.Run("another agent's ids", func(t *testing.T) {
			other := other.in(t)
			for name, c := range map[string]twin{
				"get_challenge": {"get_challenge", a{"ref": "poaw", "challenge": challenge}, "GET", ev + "poaw/challenge/" + challenge, ""},
				"submit_evaluation": {"submit_evaluation", a{"ref": "poaw", "submission": a{"challenge_id": challenge, "hash": strings.Repeat("0", 64)}},
					"POST", ev + "poaw/submit", fmt.Sprintf(`{"challenge_id":%q,"hash":%q}`, challenge, strings.Repeat("0", 64))},
				"get_job":               {"get_job", a{"ref": "ai-safety-benchmark", "job": job.JobID}, "GET", ev + "ai-safety-benchmark/jobs/" + job.JobID, ""},
				"get_session":           {"get_session", a{"ref": "live-ten", "session": sess}, "GET", ev + "live-ten/sessions/" + sess, ""},
				"read_session_messages": {"read_session_messages", a{"ref": "live-ten", "session": sess}, "GET", ev + "live-ten/sessions/" + sess + "/messages", ""},
				"post_session_message": {"post_session_message", a{"ref": "live-ten", "session": sess, "content": "let me in"},
					"POST", ev + "live-ten/sessions/" + sess + "/messages", `{"content":"let me in"}`},
				"claim_proctor_session": {"claim_proctor_session", a{"ref": "live-ten", "session_id": sess}, "POST", ev + "live-ten/proctor/claim", fmt.Sprintf(`{"session_id":%q}`, sess)},
				"grade_proctor_session": {"grade_proctor_session", a{"ref": "live-ten", "grade": a{"session_id": sess, "passed": true, "score": 100}},
					"POST", ev + "live-ten/proctor/submit", fmt.Sprintf(`{"session_id":%q,"passed":true,"score":100}`, sess)},
				"cancel_registration": {"cancel_registration", a{"ref": "live-ten"}, "DELETE", ev + "live-ten/registration", ""},
				"get_result":          {"get_result", a{"id": pass}, "GET", "/api/v1/results/" + pass, ""},
				"get_trace":           {"get_trace", a{"id": pass}, "GET", "/api/v1/results/" + pass + "/trace", ""},
				"get_credential":      {"get_credential", a{"id": pass}, "GET", "/api/v1/results/" + pass + "/credential", ""},
				"get_transcript":      {"get_transcript", a{"ref": "poaw", "id": pass}, "GET", ev + "poaw/results/" + pass + "/transcript", ""},
			} {
				sameRefusal(t, w, other, otherHTTP.key, name, c)
			}
			var page struct {
				Results []any `json:"results"`
			}
			other.must("list_results", a{"ref": "poaw"}, &page)
			if len(page.Results) != 0 {
				t.Errorf("list_results shows another agent's private results: %v", page.Results)
			}
		})

		t.Run("no key", func(t *testing.T) {

			anon := connectMCP(t, w.BaseURL, "")
			for name, c := range map[string]twin{
				"get_me":                  {"get_me", nil, "GET", "/api/v1/agents/me", ""},
				"register_for_evaluation": {"register_for_evaluation", a{"ref": "poaw"}, "POST", ev + "poaw/register", ""},
				"start_evaluation":        {"start_evaluation", a{"ref": "poaw"}, "POST", ev + "poaw/start", ""},
				"get_challenge":           {"get_challenge", a{"ref": "poaw", "challenge": challenge}, "GET", ev + "poaw/challenge/" + challenge, ""},
				"list_pending_proctor":    {"list_pending_proctor", a{"ref": "live-ten"}, "GET", ev + "live-ten/pending-proctor", ""},
				"rotate_key":              {"rotate_key", nil, "POST", "/api/v1/agents/me/keys", ""},
				"list_my_sessions":        {"list_my_sessions", nil, "GET", "/api/v1/agents/me/sessions", ""},
			} {
				sameRefusal(t, w, anon, "", name, c)
			}
			forged := connectMCP(t, w.BaseURL, otherHTTP.key[:len(otherHTTP.key)-2]+"zz")
			forged.refused("a forged key", "get_me", nil, "unauthorized")
			forged.refused("a forged key on a remembered key id", "register_for_evaluation", a{"ref": "poaw"}, "unauthorized")
		})

		t.Run("rotated key", func(t *testing.T) {
			other := other.in(t)
			old := *other.key
			stale := connectMCP(t, w.BaseURL, old)
			stale.must("register_for_evaluation", a{"ref": "identity-check"}, nil) // remembered by the key cache
			var rotated struct {
				APIKey string `json:"api_key"`
			}
			other.must("rotate_key", nil, &rotated)
			stale.refused("the rotated key", "get_me", nil, "unauthorized")
			stale.refused("the rotated key, remembered a moment ago", "register_for_evaluation", a{"ref": "identity-check"}, "unauthorized")
			*other.key = rotated.APIKey
			other.must("get_me", nil, nil)
		})

		t.Run("malformed arguments", func(t *testing.T) {
			owner := owner.in(t)
			for name, c := range map[string]struct {
				tool  string
				args  any
				field string
			}{
				"arguments not an object": {"get_evaluation", []int{1}, ""},
				"unknown argument":        {"get_evaluation", a{"ref": "poaw", "bogus": 1}, "bogus"},
				"missing path argument":   {"register_for_evaluation", a{}, "ref"},
				"missing submission":      {"submit_evaluation", a{"ref": "poaw"}, "submission"},
				"object as an id":         {"get_evaluation", a{"ref": a{"x": 1}}, "ref"},
				"dot-dot as an id":        {"get_evaluation", a{"ref": ".."}, "ref"},
				"a path as an id":         {"register_for_evaluation", a{"ref": "poaw/../../agents/me/keys"}, "ref"},
				"an escape in an id":      {"get_evaluation", a{"ref": "%2e%2e"}, "ref"},
				"a NUL in an id":          {"get_evaluation", a{"ref": "po\x00aw"}, "ref"},
				"an id too long":          {"get_evaluation", a{"ref": strings.Repeat("x", 201)}, "ref"},
			} {
				t.Run(name, func(t *testing.T) {
					e := owner.call(c.tool, c.args, nil)
					if e == nil || e.ErrorDetail.Code != "validation_failed" || e.ErrorDetail.Field != c.field {
						t.Errorf("got %+v, want validation_failed on %q", e, c.field)
					}
				})
			}
			// What the API itself refuses, it refuses alike.
			for name, c := range map[string]twin{
				"since not a number": {"read_session_messages", a{"ref": "live-ten", "session": sess, "since": "abc"},
					"GET", ev + "live-ten/sessions/" + sess + "/messages?since=abc", ""},
				"content not a string": {"post_session_message", a{"ref": "live-ten", "session": sess, "content": 5},
					"POST", ev + "live-ten/sessions/" + sess + "/messages", `{"content":5}`},
				"a message over 16 KiB": {"post_session_message", a{"ref": "live-ten", "session": sess, "content": strings.Repeat("x", 20<<10)},
					"POST", ev + "live-ten/sessions/" + sess + "/messages", fmt.Sprintf(`{"content":%q}`, strings.Repeat("x", 20<<10))},
				"a submission of the wrong shape": {"submit_evaluation", a{"ref": "poaw", "submission": a{"answers": a{}}},
					"POST", ev + "poaw/submit", `{"answers":{}}`},
				"a submission that is not an object": {"submit_evaluation", a{"ref": "poaw", "submission": "hash"},
					"POST", ev + "poaw/submit", `"hash"`},
			} {
				sameRefusal(t, w, owner, *owner.key, name, c)
			}
			// Over the API's 1 MiB the request itself is refused.
			big := connectMCP(t, w.BaseURL, *owner.key)
			if _, err := big.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "post_session_message",
				Arguments: a{"ref": "live-ten", "session": sess, "content": strings.Repeat("x", 2<<20)}}); err == nil {
				t.Error("a 2 MiB argument was taken")
			}
			if _, err := owner.cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "drop_tables"}); err == nil {
				t.Error("an unknown tool was called")
			}
			owner.must("get_me", nil, nil) // the server still answers
		})

		t.Run("a session id replayed by another", func(t *testing.T) {
			// The server keeps no session: every request is authorised
			// by its own key, and a session id names nothing.
			post := func(key, session string) (http.Header, string) {
				body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_me","arguments":{}}}`
				req, _ := http.NewRequestWithContext(t.Context(), "POST", w.BaseURL+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", session)
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.Header, string(b)
			}
			h, body := post(*owner.key, "")
			if h.Get("Mcp-Session-Id") != "" {
				t.Errorf("the server handed out a session id %q", h.Get("Mcp-Session-Id"))
			}
			if !strings.Contains(body, `mcp-owner`) {
				t.Fatalf("get_me: %s", body)
			}
			if _, body := post(*other.key, "owner-session"); !strings.Contains(body, `mcp-other`) || strings.Contains(body, `mcp-owner`) {
				t.Errorf("another agent with a replayed session id: %s", body)
			}
			if _, body := post("", "owner-session"); !strings.Contains(body, `unauthorized`) || strings.Contains(body, `mcp-owner`) {
				t.Errorf("no key with a replayed session id: %s", body)
			}
		})

		t.Run("many sessions at once", func(t *testing.T) {

			var wg sync.WaitGroup
			errs := make(chan error, 200)
			for range 200 {
				wg.Go(func() {
					k := *owner.key
					tr := &sdk.StreamableClientTransport{Endpoint: w.BaseURL + "/mcp", HTTPClient: &http.Client{Transport: keyTransport{&k, http.DefaultTransport}}}
					cs, err := sdk.NewClient(&sdk.Implementation{Name: "crowd", Version: "1"}, nil).Connect(t.Context(), tr, nil)
					if err != nil {
						errs <- err
						return
					}
					defer cs.Close()
					res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "get_me"})
					if err == nil && res.IsError {
						err = fmt.Errorf("get_me refused: %v", res.Content)
					}
					if err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("one of 200 sessions: %v", err)
				break
			}
		})
	})
}

// TestMCPSharesRateLimitsWithHTTP: registering agents from one address
// draws on one budget, whether through register_agent or the HTTP API.
func TestMCPSharesRateLimitsWithHTTP(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		anon := connectMCP(t, w.BaseURL, "")
		viaHTTP := func(i int) int {
			body := bytes.NewBufferString(fmt.Sprintf(`{"name":"rl-http-%d"}`, i))
			return w.Do("POST", "/api/v1/agents/register", body, jsonHeader, nil).StatusCode
		}
		n := 0
		for ; viaHTTP(n) == 201; n++ {
			if n > 100 {
				t.Fatal("registrations are not rate limited")
			}
		}
		anon.refused("after HTTP spent the budget", "register_agent", a{"name": "rl-mcp-0"}, "rate_limited")

		w.clock.Advance(time.Minute)
		m := 0
		for ; anon.call("register_agent", a{"name": fmt.Sprintf("rl-mcp-%d", m+1)}, nil) == nil; m++ {
			if m > 100 {
				t.Fatal("register_agent is not rate limited")
			}
		}
		if m == 0 || m > n {
			t.Errorf("MCP registered %d in a minute, HTTP %d", m, n)
		}
		if code := viaHTTP(1000); code != http.StatusTooManyRequests {
			t.Errorf("HTTP after MCP spent the budget: %d, want 429", code)
		}
	})
}
