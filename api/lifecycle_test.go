package api_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/judge"
	"github.com/sipregistry/sip/registry/registrytest"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/stats"
)

// clock is a test clock the server reads.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// world is a server with the bundled SIPs plus a few test SIPs, agents,
// a fake oEmbed endpoint and a test clock.
type world struct {
	*apitest.Client
	store  registry.Store
	clock  *clock
	oembed *fakeOEmbed
	judge  *judgeMode
	worker *evaluation.Worker
}

// liveTen is a live class work evaluation without prerequisites for ten
// agents, starting at two.
var liveTen = registry.File{Path: "evaluations/SIP-24.md", Content: []byte(`---
sip: 24
id: live-ten
name: Ten Voices
module: cooperation
type: live_class_work
status: active
author: Tests
created_at: 2026-11-22
updated_at: 2026-11-22
version: "1.0.0"
points: 3
config:
  min_participants: 2
  max_participants: 10
  duration_minutes: 30
  shared_grade: true
  problem: Agree on a name.
  allow_unclaimed: true
  proctor:
    qualification: poaw
executable:
  handler: collaboration_handler
---

# Ten Voices

Up to ten agents agree on a name.
`)}

func newWorld(t *testing.T, s registry.Store) *world {
	t.Helper()
	return newWorldWith(t, s, nil)
}

// newWorldWith is newWorld with the server's configuration changed by
// configure.
func newWorldWith(t *testing.T, s registry.Store, configure func(*api.Config), runtime ...func(*evaluation.Config)) *world {
	t.Helper()
	files := worldFiles(t)
	if _, err := registry.Sync(t.Context(), s, registry.Source{Files: files, Commit: "c1", Name: "test"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	fake := &fakeOEmbed{posts: map[string]string{}}
	oe := httptest.NewServer(fake)
	t.Cleanup(oe.Close)
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	mode := &judgeMode{mode: "good"}
	js := httptest.NewServer(mode)
	t.Cleanup(js.Close)
	cfg := api.Config{Catalog: registry.NewCatalog(s), Stats: stats.NewService(s.(stats.Source), clk.Now), Now: clk.Now, Logger: slog.New(slog.DiscardHandler),
		SealingKey: bundledKey(t), SealingKeyIsDevelopment: true}
	if configure != nil {
		configure(&cfg)
	}
	cfg = withRuntime(cfg, runtimeStores{Agents: s.(registry.AgentStore), Evaluations: s.(registrytest.FullStore),
		Jobs: s.(jobStore), Sessions: s.(sessionStore)}, append([]func(*evaluation.Config){func(c *evaluation.Config) { c.JudgeConfigured = true }, withOEmbed(oe.URL)}, runtime...)...)
	srv := httptest.NewServer(api.NewServer(cfg))
	t.Cleanup(srv.Close)
	w := &evaluation.Worker{Service: cfg.Service, Judge: &judge.Client{URL: js.URL, Model: "fake-judge"}}
	return &world{Client: apitest.New(t, srv.URL), store: s, clock: clk, oembed: fake, judge: mode, worker: w}
}

// worldFiles are the SIPs of a world: the bundled ones and the tests'.
func worldFiles(t *testing.T) []registry.File {
	t.Helper()
	files, err := registry.ReadFS(evaluations.FS, ".", "evaluations")
	if err != nil {
		t.Fatal(err)
	}
	expiring := siptest.Set(siptest.SIP(22, "expiring", "active"), "executable:", "config:\n  valid_days: 1\nexecutable:")
	// The bundled evaluations that proctors grade, with their first proctors
	// qualified by a pass of PoAW, as a repository would name them.
	for i, f := range files {
		if f.Path == "evaluations/SIP-5.md" || f.Path == "evaluations/SIP-6.md" || f.Path == "evaluations/SIP-7.md" {
			c := string(f.Content)
			for _, q := range []string{"ai-safety-benchmark", "non-spamminess"} {
				c = strings.Replace(c, "    qualification: "+q+"\n", "    qualification: poaw\n", 1)
			}
			if !strings.Contains(c, "qualification: poaw") {
				c = strings.Replace(c, "config:\n", "config:\n  proctor:\n    qualification: poaw\n", 1)
			}
			files[i].Content = []byte(c)
		}
	}
	return append(files, siptest.SIP(20, "needs-poaw", "active", "poaw"), siptest.SIP(21, "drafty", "draft"), expiring,
		siptest.SIP(23, "needs-expiring", "active", "expiring"), liveTen)
}

// testAgent drives the API as an outside agent would.
type testAgent struct {
	w     *world
	name  string
	key   string
	claim string
	code  string
	owned bool // claimed by a human owner
}

func (w *world) agent(name string) *testAgent {
	w.T.Helper()
	var r registered
	if resp := w.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"`+name+`"}`), jsonHeader, &r); resp.StatusCode != 201 {
		w.T.Fatalf("register agent: %d", resp.StatusCode)
	}
	return &testAgent{w: w, name: name, key: r.Agent.APIKey, code: r.Agent.VerificationCode,
		claim: r.Agent.ClaimURL[strings.LastIndex(r.Agent.ClaimURL, "/")+1:]}
}

func (a *testAgent) call(method, path, body string, out any) int {
	a.w.T.Helper()
	var r *strings.Reader
	if body != "" {
		r = strings.NewReader(body)
	} else {
		r = strings.NewReader("")
	}
	return a.w.Do(method, path, r, bearer(a.key), out).StatusCode
}

type resultBody struct {
	Result struct {
		ID                string  `json:"id"`
		Passed            bool    `json:"passed"`
		PointsEarned      float64 `json:"points_earned"`
		EvaluationVersion string  `json:"evaluation_version"`
	} `json:"result"`
}

type startBody struct {
	RegistrationID string `json:"registration_id"`
	Challenge      struct {
		ID       string `json:"id"`
		Values   []int  `json:"values"`
		Nonce    string `json:"nonce"`
		FetchURL string `json:"fetch_url"`
	} `json:"challenge"`
}

// poaw runs Proof of Agentic Work; wrong answers a wrong hash.
func (a *testAgent) poaw(t *testing.T, wrong bool) resultBody {
	t.Helper()
	challenge, hash := a.startPoAW(t)
	if wrong {
		hash = strings.Repeat("0", 64)
	}
	var res resultBody
	if code := a.call("POST", "/api/v1/evaluations/poaw/submit", fmt.Sprintf(`{"challenge_id":%q,"hash":%q}`, challenge, hash), &res); code != 201 {
		t.Fatalf("submit: %d", code)
	}
	return res
}

// check registers for, starts and submits a pass/fail check.
func (a *testAgent) check(t *testing.T, id string) resultBody {
	t.Helper()
	if code := a.call("POST", "/api/v1/evaluations/"+id+"/register", "", nil); code != 201 && code != 200 {
		t.Fatalf("register %s: %d", id, code)
	}
	if code := a.call("POST", "/api/v1/evaluations/"+id+"/start", "", nil); code != 200 {
		t.Fatalf("start %s: %d", id, code)
	}
	var res resultBody
	if code := a.call("POST", "/api/v1/evaluations/"+id+"/submit", "{}", &res); code != 201 {
		t.Fatalf("submit %s: %d", id, code)
	}
	return res
}

type listing struct {
	Evaluations []struct {
		ID                 string `json:"id"`
		RegistrationStatus string `json:"registration_status"`
		HasPassed          bool   `json:"has_passed"`
		CanRegister        bool   `json:"can_register"`
	} `json:"evaluations"`
}

func (a *testAgent) status(t *testing.T, id string) (string, bool, bool) {
	t.Helper()
	var l listing
	a.call("GET", "/api/v1/evaluations", "", &l)
	for _, e := range l.Evaluations {
		if e.ID == id {
			return e.RegistrationStatus, e.HasPassed, e.CanRegister
		}
	}
	t.Fatalf("%s not listed", id)
	return "", false, false
}

type profileBody struct {
	Agent struct {
		Points float64 `json:"points"`
	} `json:"agent"`
	Badges []struct {
		EvaluationID string `json:"evaluation_id"`
	} `json:"badges"`
}

func TestSingleAgentEvaluationsEndToEnd(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a := w.agent("tester-1")

		if st, passed, can := a.status(t, "needs-poaw"); st != "prerequisites_not_met" || passed || can {
			t.Errorf("before PoAW: %s %v %v", st, passed, can)
		}
		var e errorResponse
		if code := a.call("POST", "/api/v1/evaluations/needs-poaw/register", "", &e); code != 403 || e.ErrorDetail.Code != "prerequisites_not_met" {
			t.Errorf("prerequisites: %d %+v", code, e)
		}

		// A wrong hash is a failed result, not an error, and earns nothing.
		if r := a.poaw(t, true); r.Result.Passed || r.Result.PointsEarned != 0 {
			t.Errorf("wrong hash: %+v", r)
		}
		r := a.poaw(t, false)
		if !r.Result.Passed || r.Result.PointsEarned != 10 || r.Result.EvaluationVersion != "1.0.0" {
			t.Fatalf("PoAW: %+v", r)
		}
		if again := a.poaw(t, false); !again.Result.Passed || again.Result.PointsEarned != 0 {
			t.Errorf("second pass credited points: %+v", again)
		}
		if st, passed, _ := a.status(t, "poaw"); st != "completed" || !passed {
			t.Errorf("after PoAW: %s %v", st, passed)
		}

		// Identity check: fails while IDENTITY.md is empty, then passes.
		if r := a.check(t, "identity-check"); r.Result.Passed {
			t.Error("identity check passed without an identity")
		}
		a.call("PUT", "/api/v1/agents/me/identity", `{"identity_md":"# tester-1\n\nI test things."}`, nil)
		if r := a.check(t, "identity-check"); !r.Result.Passed || r.Result.PointsEarned != 1 {
			t.Errorf("identity check: %+v", r)
		}

		// X verification: fails until a human owner claims the agent.
		if r := a.check(t, "x-verification"); r.Result.Passed {
			t.Error("X verification passed unclaimed")
		}
		w.oembed.posts["https://x.com/owner/status/1"] = "owner|Verifying my agent " + a.code
		if code := w.Do("POST", "/api/v1/agents/claim", claimBody(a.claim, "https://x.com/owner/status/1"), jsonHeader, nil).StatusCode; code != 200 {
			t.Fatalf("claim: %d", code)
		}
		if r := a.check(t, "x-verification"); !r.Result.Passed {
			t.Error("X verification failed for a claimed agent")
		}

		// The prerequisite now holds.
		if r := a.check(t, "needs-poaw"); !r.Result.Passed || r.Result.PointsEarned != 20 {
			t.Errorf("needs-poaw: %+v", r)
		}

		var p profileBody
		w.Get("/api/v1/agents/tester-1", &p)
		if p.Agent.Points != 32 || len(p.Badges) != 4 {
			t.Errorf("profile: %+v", p)
		}
		var me struct {
			Agent struct {
				Points float64 `json:"points"`
			} `json:"agent"`
		}
		a.call("GET", "/api/v1/agents/me", "", &me)
		if me.Agent.Points != 32 {
			t.Errorf("me points %v", me.Agent.Points)
		}

		// Every result keeps its execution record.
		var tr struct {
			Trace struct {
				Status   string `json:"status"`
				ExitCode int    `json:"exit_code"`
				Gates    []struct {
					Name   string `json:"name"`
					Passed bool   `json:"passed"`
				} `json:"gates"`
				Inputs map[string]string `json:"inputs"`
			} `json:"trace"`
		}
		if code := w.Get("/api/v1/results/"+r.Result.ID+"/trace", &tr).StatusCode; code != 200 || tr.Trace.Status != "success" ||
			tr.Trace.ExitCode != 0 || len(tr.Trace.Gates) != 4 || !strings.HasPrefix(tr.Trace.Inputs["hash"], "hmac-sha256:") {
			t.Errorf("trace %d %+v", code, tr)
		}
	})
}

func TestPoAWRules(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a, b := w.agent("alice-1"), w.agent("bob-1")
		a.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
		var first, second startBody
		if code := a.call("POST", "/api/v1/evaluations/poaw/start", "", &first); code != 201 {
			t.Fatalf("start %d", code)
		}
		if code := a.call("POST", "/api/v1/evaluations/poaw/start", "", &second); code != 200 || second.Challenge.ID != first.Challenge.ID {
			t.Errorf("start again gave %d %s, want the open challenge %s", code, second.Challenge.ID, first.Challenge.ID)
		}
		// Start's answer holds the challenge; fetch_url gives the same
		// values and nonce again, and a repeated start the same ones.
		var fetched startBody
		if code := a.call("GET", first.Challenge.FetchURL, "", &fetched); code != 200 {
			t.Fatalf("fetch: %d", code)
		}
		if len(first.Challenge.Values) != evaluation.PoAWValues || first.Challenge.Nonce == "" ||
			!slices.Equal(first.Challenge.Values, fetched.Challenge.Values) || first.Challenge.Nonce != fetched.Challenge.Nonce ||
			!slices.Equal(first.Challenge.Values, second.Challenge.Values) || first.Challenge.Nonce != second.Challenge.Nonce {
			t.Errorf("start gave %v %q, start again %v %q, fetch %v %q: want the same 30 values and nonce",
				first.Challenge.Values, first.Challenge.Nonce, second.Challenge.Values, second.Challenge.Nonce, fetched.Challenge.Values, fetched.Challenge.Nonce)
		}
		if code := b.call("GET", first.Challenge.FetchURL, "", nil); code != 403 {
			t.Errorf("another agent's challenge: %d", code)
		}
		// Start and submit find the registration in the statement that
		// does their work; without one they say so.
		for _, tt := range []struct{ path, body string }{
			{"/api/v1/evaluations/poaw/start", ""},
			{"/api/v1/evaluations/poaw/submit", `{"challenge_id":"` + first.Challenge.ID + `","hash":"x"}`},
		} {
			t.Run(tt.path, func(t *testing.T) {
				var e errorResponse
				if code := b.call("POST", tt.path, tt.body, &e); code != 409 || e.ErrorDetail.Code != "not_registered" {
					t.Errorf("without a registration: got %d %+v, want 409 not_registered", code, e)
				}
			})
		}
		b.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
		if code := b.call("POST", "/api/v1/evaluations/poaw/submit", `{"challenge_id":"ch_none","hash":"x"}`, nil); code != 404 {
			t.Errorf("submitting an unknown challenge: %d, want 404", code)
		}
		if code := b.call("POST", "/api/v1/evaluations/poaw/submit", `{"challenge_id":"`+first.Challenge.ID+`","hash":"x"}`, nil); code != 403 {
			t.Errorf("submitting another agent's challenge: %d", code)
		}
		// Late: the answer comes after expires_at, which is a failed result.
		w.clock.Advance(16 * time.Second)
		if code := a.call("GET", first.Challenge.FetchURL, "", nil); code != 410 {
			t.Errorf("expired challenge: %d", code)
		}
		var res resultBody
		if code := a.call("POST", "/api/v1/evaluations/poaw/submit", `{"challenge_id":"`+first.Challenge.ID+`","hash":"abc"}`, &res); code != 201 || res.Result.Passed {
			t.Errorf("late answer: %d %+v", code, res)
		}
		var tr struct {
			Trace struct {
				Status   string `json:"status"`
				ExitCode int    `json:"exit_code"`
			} `json:"trace"`
		}
		w.Get("/api/v1/results/"+res.Result.ID+"/trace", &tr)
		if tr.Trace.Status != "timeout" || tr.Trace.ExitCode != evaluation.ExitTimeout {
			t.Errorf("late trace %+v", tr)
		}
		if code := a.call("GET", first.Challenge.FetchURL, "", nil); code != 410 {
			t.Errorf("used challenge: %d", code)
		}
		for _, tt := range []struct {
			name, body string
			h          http.Header
			status     int
		}{
			{"malformed", `{"challenge_id":`, bearer(a.key), 400},
			{"wrong content type", `challenge_id=1`, http.Header{"Authorization": {"Bearer " + a.key}, "Content-Type": {"text/plain"}}, 415},
			{"oversized", `{"hash":"` + strings.Repeat("h", 2<<20) + `"}`, bearer(a.key), 413},
			{"no key", `{}`, jsonHeader, 401},
		} {
			t.Run(tt.name, func(t *testing.T) {
				a.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
				if code := w.Do("POST", "/api/v1/evaluations/poaw/submit", strings.NewReader(tt.body), tt.h, nil).StatusCode; code != tt.status {
					t.Errorf("got %d, want %d", code, tt.status)
				}
			})
		}
	})
}

// TestStartRegisters: start with {"register": true} registers as
// register does (its refusals, and the open registration when there is
// one) and starts, in one request; without it start needs a registration.
func TestStartRegisters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a, b := w.agent("dora-1"), w.agent("erin-1")
		const register = `{"register":true}`
		for _, tt := range []struct {
			name, path, body string
			status           int
			code             string
		}{
			{"not active", "/api/v1/evaluations/drafty/start", register, 409, "evaluation_not_active"},
			{"prerequisites", "/api/v1/evaluations/needs-poaw/start", register, 403, "prerequisites_not_met"},
			{"claimed candidates only", "/api/v1/evaluations/non-spamminess/start", register, 403, "claim_required"},
			{"unknown evaluation", "/api/v1/evaluations/nope/start", register, 404, "not_found"},
			{"an empty body", "/api/v1/evaluations/poaw/start", `{}`, 409, "not_registered"},
			{"register false", "/api/v1/evaluations/poaw/start", `{"register":false}`, 409, "not_registered"},
			{"register not a boolean", "/api/v1/evaluations/poaw/start", `{"register":"yes"}`, 400, "validation_failed"},
			{"an unknown field", "/api/v1/evaluations/poaw/start", `{"registered":true}`, 400, "validation_failed"},
			{"trailing data", "/api/v1/evaluations/poaw/start", register + `{}`, 400, "bad_request"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var e errorResponse
				if code := a.call("POST", tt.path, tt.body, &e); code != tt.status || e.ErrorDetail.Code != tt.code {
					t.Errorf("got %d %+v, want %d %s", code, e, tt.status, tt.code)
				}
			})
		}
		if code := w.Do("POST", "/api/v1/evaluations/poaw/start", strings.NewReader("register=true"),
			http.Header{"Authorization": {"Bearer " + a.key}, "Content-Type": {"application/x-www-form-urlencoded"}}, nil).StatusCode; code != 415 {
			t.Errorf("a form body: %d, want 415", code)
		}
		if code := w.Do("POST", "/api/v1/evaluations/poaw/start", strings.NewReader(register), jsonHeader, nil).StatusCode; code != 401 {
			t.Errorf("no key: %d, want 401", code)
		}
		if code := a.call("POST", "/api/v1/evaluations/poaw/start", `{"register":true,"pad":"`+strings.Repeat("x", 2<<20)+`"}`, nil); code != 413 {
			t.Errorf("an oversized body: %d, want 413", code)
		}
		if status, _, _ := a.status(t, "poaw"); status != "available" {
			t.Fatalf("after the refusals poaw is %s for the agent, want available (nothing registered)", status)
		}

		// Two requests: start with register, and submit.
		var first, again startBody
		if code := a.call("POST", "/api/v1/evaluations/poaw/start", register, &first); code != 201 || first.RegistrationID == "" || len(first.Challenge.Values) != evaluation.PoAWValues {
			t.Fatalf("start with register: %d %+v", code, first)
		}
		if code := a.call("POST", "/api/v1/evaluations/poaw/start", register, &again); code != 200 || again.RegistrationID != first.RegistrationID || again.Challenge.ID != first.Challenge.ID {
			t.Errorf("start with register again: %d %+v, want 200 with registration %s and challenge %s", code, again, first.RegistrationID, first.Challenge.ID)
		}
		var res resultBody
		if code := a.call("POST", "/api/v1/evaluations/poaw/submit", fmt.Sprintf(`{"challenge_id":%q,"hash":%q}`, first.Challenge.ID,
			evaluation.PoAWHash(first.Challenge.Values, first.Challenge.Nonce)), &res); code != 201 || !res.Result.Passed {
			t.Fatalf("submit: %d %+v", code, res)
		}
		// A finished attempt is not open: register opens another one.
		var next startBody
		if code := a.call("POST", "/api/v1/evaluations/poaw/start", register, &next); code != 201 || next.RegistrationID == first.RegistrationID || next.Challenge.ID == first.Challenge.ID {
			t.Errorf("start with register after the result: %d %+v, want a new registration and challenge", code, next)
		}

		// An open registration is the one started.
		var reg struct {
			Registration struct{ ID string } `json:"registration"`
		}
		if code := b.call("POST", "/api/v1/evaluations/poaw/register", "", &reg); code != 201 {
			t.Fatalf("register: %d", code)
		}
		var st startBody
		if code := b.call("POST", "/api/v1/evaluations/poaw/start", register, &st); code != 201 || st.RegistrationID != reg.Registration.ID {
			t.Errorf("start with register on an open registration: %d %+v, want registration %s", code, st, reg.Registration.ID)
		}

		// Many at once by one agent: one registration, one challenge.
		c := w.agent("fern-1")
		var mu sync.Mutex
		regs, challenges, codes := map[string]bool{}, map[string]bool{}, map[int]int{}
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				var st startBody
				code := c.call("POST", "/api/v1/evaluations/poaw/start", register, &st)
				mu.Lock()
				defer mu.Unlock()
				codes[code]++
				regs[st.RegistrationID], challenges[st.Challenge.ID] = true, true
			})
		}
		wg.Wait()
		if codes[201] != 1 || codes[200] != 19 || len(regs) != 1 || len(challenges) != 1 {
			t.Errorf("20 starts with register at once: codes %v, %d registrations, %d challenges; want one 201, 19 200s, one of each", codes, len(regs), len(challenges))
		}
	})
}

// TestStartRegisterResumesAnOpenRegistration: with a registration open,
// start {"register": true} starts it as start without the body does,
// even where register's rules would no longer open a new one (a
// prerequisite's pass expired, or the evaluation was deprecated, since
// the agent registered).
func TestStartRegisterResumesAnOpenRegistration(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		const register = `{"register":true}`

		t.Run("a prerequisite's pass expired", func(t *testing.T) {
			a := w.agent("gina-1")
			a.call("PUT", "/api/v1/agents/me/identity", `{"identity_md":"# rev"}`, nil)
			if r := a.check(t, "expiring"); !r.Result.Passed {
				t.Fatal("expiring check failed")
			}
			if code := a.call("POST", "/api/v1/evaluations/needs-expiring/register", "", nil); code != 201 {
				t.Fatalf("register: %d", code)
			}
			w.clock.Advance(25 * time.Hour)
			var e errorResponse
			code := a.call("POST", "/api/v1/evaluations/needs-expiring/start", register, &e)
			plain := a.call("POST", "/api/v1/evaluations/needs-expiring/start", "", nil)
			if code != plain {
				t.Errorf("open registration: start {register:true} %d %s, start without body %d", code, e.ErrorDetail.Code, plain)
			}
		})

		t.Run("the evaluation was deprecated", func(t *testing.T) {
			b := w.agent("hal-1")
			active := versioned(71, "retiring", "simple_pass_fail", "identity_check_handler", "1.0.0", "")
			w.resync(t, "c-retiring-1", active)
			if code := b.call("POST", "/api/v1/evaluations/retiring/register", "", nil); code != 201 {
				t.Fatalf("register: %d", code)
			}
			next := versioned(71, "retiring", "simple_pass_fail", "identity_check_handler", "1.1.0", "")
			deprecated := registry.File{Path: next.Path, Content: []byte(strings.Replace(string(next.Content), "status: active", "status: deprecated", 1))}
			w.resync(t, "c-retiring-2", deprecated)
			var e errorResponse
			code := b.call("POST", "/api/v1/evaluations/retiring/start", register, &e)
			plain := b.call("POST", "/api/v1/evaluations/retiring/start", "", nil)
			if code != plain {
				t.Errorf("open registration: start {register:true} %d %s, start without body %d", code, e.ErrorDetail.Code, plain)
			}
		})
	})
}

// TestStartRegisterAfterAnExpiredChallenge: a challenge that expired
// unanswered ends its attempt, whichever request meets it first, and
// before the sweeper does: start answers 410 and records the expired
// result; start {"register": true} registers anew under register's rules,
// so a SIP's retry delay after a failure holds (no fresh challenge on the
// old registration that would skip it).
func TestStartRegisterAfterAnExpiredChallenge(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-cool", versioned(72, "cool-poaw", "simple_pass_fail", "poaw_handler", "1.0.0", "  timeout_seconds: 15\n  retry_after_hours: 1\n"))
		plain, reg, again := w.agent("ivy-1"), w.agent("jo-1"), w.agent("kim-1")
		first := map[*testAgent]startBody{}
		for _, ag := range []*testAgent{plain, reg} {
			var st startBody
			if code := ag.call("POST", "/api/v1/evaluations/cool-poaw/start", `{"register":true}`, &st); code != 201 {
				t.Fatalf("start: %d", code)
			}
			first[ag] = st
		}
		var st startBody
		if code := again.call("POST", "/api/v1/evaluations/poaw/start", `{"register":true}`, &st); code != 201 {
			t.Fatalf("start poaw: %d", code)
		}
		first[again] = st
		w.clock.Advance(20 * time.Second) // past the challenges' 15 s; the sweeper has not run
		expired := func(ag *testAgent, ref string) {
			t.Helper()
			if got := outcomesByRegistration(ag, ref)[first[ag].RegistrationID]; len(got) != 1 || got[0] != "expired" {
				t.Errorf("%s's first attempt ended %v, want one expired result", ag.name, got)
			}
		}
		var e errorResponse
		if code := plain.call("POST", "/api/v1/evaluations/cool-poaw/start", "", &e); code != 410 || e.ErrorDetail.Code != "gone" {
			t.Errorf("start after the challenge expired: %d %+v, want 410 gone", code, e)
		}
		expired(plain, "cool-poaw")
		if code := plain.call("POST", "/api/v1/evaluations/cool-poaw/submit", `{"challenge_id":"`+first[plain].Challenge.ID+`","hash":"x"}`, nil); code != 409 {
			t.Errorf("submit to the ended attempt: %d, want 409", code)
		}
		if code := reg.call("POST", "/api/v1/evaluations/cool-poaw/start", `{"register":true}`, &e); code != 409 || e.ErrorDetail.Code != "retry_later" {
			t.Errorf("start {register:true} after the challenge expired: %d %+v, want 409 retry_later (the SIP's delay after a failure)", code, e)
		}
		expired(reg, "cool-poaw")
		// Without a retry delay, the same request opens the next attempt.
		var next startBody
		if code := again.call("POST", "/api/v1/evaluations/poaw/start", `{"register":true}`, &next); code != 201 || next.RegistrationID == first[again].RegistrationID {
			t.Errorf("start {register:true} on poaw after expiry: %d %+v, want a new registration", code, next)
		}
		expired(again, "poaw")
	})
}

func TestRegistrationRules(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a := w.agent("carol-1")
		for _, tt := range []struct {
			path   string
			status int
			code   string
		}{
			{"/api/v1/evaluations/drafty/register", 409, "evaluation_not_active"},
			{"/api/v1/evaluations/nope/register", 404, "not_found"},
			{"/api/v1/evaluations/SIP-1/register", 404, "not_found"},
			{"/api/v1/evaluations/poaw/start", 409, "not_registered"},
			{"/api/v1/evaluations/poaw/submit", 409, "not_registered"},
			{"/api/v1/evaluations/non-spamminess/register", 403, "claim_required"},      // proctored: claimed candidates only
			{"/api/v1/evaluations/ai-safety-benchmark/register", 403, "claim_required"}, // points for fixed answers: claimed agents only
			{"/api/v1/evaluations/needs-poaw/register", 403, "prerequisites_not_met"},
		} {
			t.Run(tt.path, func(t *testing.T) {
				var e errorResponse
				if code := a.call("POST", tt.path, "", &e); code != tt.status || e.ErrorDetail.Code != tt.code {
					t.Errorf("got %d %+v, want %d %s", code, e, tt.status, tt.code)
				}
			})
		}
		if code := a.call("DELETE", "/api/v1/evaluations/poaw/registration", "", nil); code != 409 {
			t.Errorf("cancel without registration: %d", code)
		}
		// 100 concurrent registrations by one agent open one.
		codes, ids := a.atOnce(t, 100, "/api/v1/evaluations/identity-check/register", func(body []byte) string {
			var r struct {
				Registration struct{ ID string } `json:"registration"`
			}
			json.Unmarshal(body, &r)
			return r.Registration.ID
		})
		if codes[201] != 1 || codes[200] != 99 || ids != 1 {
			t.Errorf("100 registrations at once: %v, %d ids", codes, ids)
		}
		var wg sync.WaitGroup
		if code := a.call("DELETE", "/api/v1/evaluations/identity-check/registration", "", nil); code != 200 {
			t.Errorf("cancel: %d", code)
		}
		// 100 concurrent submits produce one result, credited once.
		a.call("PUT", "/api/v1/agents/me/identity", `{"identity_md":"# carol"}`, nil)
		a.call("POST", "/api/v1/evaluations/identity-check/register", "", nil)
		var results, refused atomic.Int32
		for range 100 {
			wg.Go(func() {
				switch code := a.call("POST", "/api/v1/evaluations/identity-check/submit", "{}", nil); code {
				case 201:
					results.Add(1)
				case 409:
					refused.Add(1)
				default:
					t.Errorf("submit: %d", code)
				}
			})
		}
		wg.Wait()
		var me struct {
			Agent struct{ Points float64 } `json:"agent"`
		}
		a.call("GET", "/api/v1/agents/me", "", &me)
		if results.Load() != 1 || refused.Load() != 99 || me.Agent.Points != 1 {
			t.Errorf("%d results, %d refused, %v points", results.Load(), refused.Load(), me.Agent.Points)
		}
		// 20 concurrent starts of PoAW make one challenge: one 201, and
		// nineteen 200s that return it.
		a.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
		codes, ids = a.atOnce(t, 20, "/api/v1/evaluations/poaw/start", func(body []byte) string {
			var st struct {
				Challenge struct{ ID string } `json:"challenge"`
			}
			json.Unmarshal(body, &st)
			return st.Challenge.ID
		})
		if codes[201] != 1 || codes[200] != 19 || ids != 1 {
			t.Errorf("20 starts at once: %v, %d challenges", codes, ids)
		}
	})
}

func TestExpiryAndPrivacy(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a, b := w.agent("dave-1"), w.agent("erin-1")
		a.call("PUT", "/api/v1/agents/me/identity", `{"identity_md":"# dave"}`, nil)
		r := a.check(t, "expiring")
		if !r.Result.Passed {
			t.Fatal("expiring check failed")
		}
		if st, _, can := a.status(t, "needs-expiring"); st != "available" || !can {
			t.Errorf("with a valid pass of its prerequisite: %s, can register %v", st, can)
		}
		w.clock.Advance(25 * time.Hour)
		if st, passed, _ := a.status(t, "expiring"); st != "available" || passed {
			t.Errorf("after valid_days: %s %v", st, passed)
		}
		if code := a.call("POST", "/api/v1/evaluations/needs-expiring/register", "", nil); code != 403 {
			t.Errorf("an expired pass satisfied a prerequisite: %d", code)
		}
		var p profileBody
		w.Get("/api/v1/agents/dave-1", &p)
		if len(p.Badges) != 0 || p.Agent.Points != 22 {
			t.Errorf("expired badge shown or points lost: %+v", p)
		}
		// Private results are visible only to their agent.
		a.call("PATCH", "/api/v1/agents/me", `{"results_public":false}`, nil)
		if code := b.call("GET", "/api/v1/results/"+r.Result.ID, "", nil); code != 404 {
			t.Errorf("another agent sees a private result: %d", code)
		}
		if code := w.Get("/api/v1/results/"+r.Result.ID+"/trace", nil).StatusCode; code != 404 {
			t.Errorf("anyone sees a private trace: %d", code)
		}
		if code := a.call("GET", "/api/v1/results/"+r.Result.ID, "", nil); code != 200 {
			t.Errorf("the agent cannot see its own result: %d", code)
		}
		var list struct {
			Results []any `json:"results"`
		}
		b.call("GET", "/api/v1/evaluations/expiring/results", "", &list)
		if len(list.Results) != 0 {
			t.Errorf("private results listed to others: %d", len(list.Results))
		}
		a.call("GET", "/api/v1/evaluations/expiring/results", "", &list)
		if len(list.Results) != 1 {
			t.Errorf("own private results not listed: %d", len(list.Results))
		}
		if code := b.call("GET", "/api/v1/evaluations/expiring/results?cursor=bogus!", "", nil); code != 400 {
			t.Errorf("bad cursor: %d", code)
		}
		if code := b.call("GET", "/api/v1/evaluations/expiring/results?limit=0", "", nil); code != 400 {
			t.Errorf("bad limit: %d", code)
		}
	})
}

// TestBodylessRequestsRefuseBodies: register, start and cancel take no
// body. A body they would ignore is refused, and a refused request changes
// nothing.
func TestBodylessRequestsRefuseBodies(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a := w.agent("dora-1")
		textPlain := http.Header{"Authorization": {"Bearer " + a.key}, "Content-Type": {"text/plain"}}
		for _, path := range []string{"/api/v1/evaluations/poaw/register", "/api/v1/evaluations/poaw/start", "/api/v1/evaluations/poaw/registration"} {
			method := "POST"
			if strings.HasSuffix(path, "/registration") {
				method = "DELETE"
			}
			for _, tt := range []struct {
				name, body string
				h          http.Header
				status     int
				code       string
			}{
				{"text", "x", textPlain, 415, "unsupported_media_type"},
				{"unknown field", `{"evaluation_version":"0.0.1"}`, bearer(a.key), 400, "validation_failed"},
				{"not an object", `[]`, bearer(a.key), 400, "validation_failed"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					var e errorResponse
					if code := w.Do(method, path, strings.NewReader(tt.body), tt.h, &e).StatusCode; code != tt.status || e.ErrorDetail.Code != tt.code {
						t.Errorf("%s %s: got %d %q; want %d %q", method, path, code, e.ErrorDetail.Code, tt.status, tt.code)
					}
				})
			}
			if st, _, _ := a.status(t, "poaw"); st != "available" {
				t.Fatalf("after refused %s %s the registration status is %q; want available", method, path, st)
			}
		}
		if code := a.call("POST", "/api/v1/evaluations/poaw/register", `{}`, nil); code != 201 {
			t.Errorf("register with {}: %d, want 201", code)
		}
		if code := a.call("POST", "/api/v1/evaluations/poaw/start", `{}`, nil); code != 201 && code != 200 {
			t.Errorf("start with {}: %d", code)
		}
	})
}

// atOnce POSTs to path n times at once and counts the answers' statuses
// and the distinct ids that id reads from their bodies.
func (a *testAgent) atOnce(t *testing.T, n int, path string, id func(body []byte) string) (codes map[int]int, ids int) {
	t.Helper()
	var mu sync.Mutex
	codes, seen := map[int]int{}, map[string]bool{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			var raw json.RawMessage
			code := a.call("POST", path, "", &raw)
			mu.Lock()
			defer mu.Unlock()
			codes[code]++
			if got := id(raw); got != "" {
				seen[got] = true
			} else if code < 300 {
				t.Errorf("POST %s: %d with no id in %s", path, code, raw)
			}
		})
	}
	wg.Wait()
	return codes, len(seen)
}
