package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
)

// TestCancelledAttemptsEndInAnOutcome: cancelling after the challenge was
// fetched records a cancelled result the agent can see, and frees it to
// register again; cancelling before starting leaves no result.
func TestCancelledAttemptsEndInAnOutcome(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a := w.agent("quitter-1")
		a.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
		var st startBody
		if code := a.call("POST", "/api/v1/evaluations/poaw/start", "", &st); code != 201 {
			t.Fatalf("start: %d", code)
		}
		a.call("GET", st.Challenge.FetchURL, "", nil)
		var reg struct {
			Registration struct {
				Status string `json:"status"`
			} `json:"registration"`
		}
		if code := a.call("DELETE", "/api/v1/evaluations/poaw/registration", "", &reg); code != 200 || reg.Registration.Status != "cancelled" {
			t.Fatalf("cancel: %d %+v", code, reg)
		}
		var list struct {
			Results []struct {
				Outcome string `json:"outcome"`
				Passed  bool   `json:"passed"`
			} `json:"results"`
		}
		if code := a.call("GET", "/api/v1/evaluations/poaw/results", "", &list); code != 200 || len(list.Results) != 1 ||
			list.Results[0].Outcome != "cancelled" || list.Results[0].Passed {
			t.Errorf("results after a cancel: %d %+v; want one cancelled", code, list)
		}
		if code := a.call("POST", "/api/v1/evaluations/poaw/submit", `{"challenge_id":"`+st.Challenge.ID+`","hash":"x"}`, nil); code != 409 {
			t.Errorf("submitting a cancelled attempt: %d, want 409", code)
		}
		if code := a.call("POST", "/api/v1/evaluations/poaw/register", "", nil); code != 201 {
			t.Errorf("register after a cancel: %d, want 201", code)
		}
		// Not started: cancelling records nothing.
		if code := a.call("DELETE", "/api/v1/evaluations/poaw/registration", "", nil); code != 200 {
			t.Errorf("cancel before start: %d", code)
		}
		a.call("GET", "/api/v1/evaluations/poaw/results", "", &list)
		if len(list.Results) != 1 {
			t.Errorf("%d results after cancelling an attempt never started; want still 1", len(list.Results))
		}
	})
}

// TestFiftySubmitsOfOneAttempt: fifty right answers to one PoAW challenge
// and fifty to one benchmark attempt at once record one result each; the
// others are refused, and nothing fails on the server.
func TestFiftySubmitsOfOneAttempt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-mc", versioned(47, "mc-only", "complex_benchmark", "benchmark_handler", "1.0.0", benchmarkConfig("A")))
		a := w.agent("eager-1").asCandidate(t)
		challenge, hash := a.startPoAW(t)
		a.call("POST", "/api/v1/evaluations/mc-only/register", "", nil)
		a.call("POST", "/api/v1/evaluations/mc-only/start", "", nil)

		for _, tt := range []struct{ id, body string }{
			{"poaw", fmt.Sprintf(`{"challenge_id":%q,"hash":%q}`, challenge, hash)},
			{"mc-only", `{"answers":{"q1":"A"}}`},
		} {
			t.Run(tt.id, func(t *testing.T) {
				codes := map[int]int{}
				var mu sync.Mutex
				var wg sync.WaitGroup
				for range 50 {
					wg.Go(func() {
						code := a.call("POST", "/api/v1/evaluations/"+tt.id+"/submit", tt.body, nil)
						mu.Lock()
						codes[code]++
						mu.Unlock()
					})
				}
				wg.Wait()
				refused := 0
				for code, n := range codes {
					if code >= 400 && code < 500 {
						refused += n
					}
				}
				if codes[201] != 1 || refused != 49 {
					t.Errorf("got answers %v; want one 201 and 49 refusals", codes)
				}
				if got := a.outcomes(t, tt.id); !equal(got, []string{"passed"}) {
					t.Errorf("got outcomes %v, want one pass", got)
				}
			})
		}
	})
}

// TestCancelRacingSubmit: a cancel and a right answer sent together end
// the attempt once: cancelled, or passed, never both and never neither.
func TestCancelRacingSubmit(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		for round := range 8 {
			a := w.agent(fmt.Sprintf("torn-%d", round))
			challenge, hash := a.startPoAW(t)
			body := fmt.Sprintf(`{"challenge_id":%q,"hash":%q}`, challenge, hash)
			var cancel, submit int
			var wg sync.WaitGroup
			wg.Go(func() { cancel = a.call("DELETE", "/api/v1/evaluations/poaw/registration", "", nil) })
			wg.Go(func() { submit = a.call("POST", "/api/v1/evaluations/poaw/submit", body, nil) })
			wg.Wait()
			got := a.outcomes(t, "poaw")
			switch {
			case cancel == 200 && submit/100 == 4 && equal(got, []string{"cancelled"}):
			case submit == 201 && cancel == 409 && equal(got, []string{"passed"}):
			default:
				t.Errorf("round %d: cancel %d, submit %d, outcomes %v; want exactly one of them to end the attempt", round, cancel, submit, got)
			}
		}
	})
}

// TestRecordsHoldNoAnswerOracle: the public execution record of a pass
// holds its answers only as keyed digests: the unkeyed hash that anyone
// could compute from a guess appears nowhere in it.
func TestRecordsHoldNoAnswerOracle(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-mc", versioned(47, "mc-only", "complex_benchmark", "benchmark_handler", "1.0.0", benchmarkConfig("A")))
		a := w.agent("oracle-1").asCandidate(t)
		a.call("POST", "/api/v1/evaluations/mc-only/register", "", nil)
		a.call("POST", "/api/v1/evaluations/mc-only/start", "", nil)
		answers := map[string]string{"q1": "A"}
		var r resultBody
		if code := a.call("POST", "/api/v1/evaluations/mc-only/submit", `{"answers":{"q1":"A"}}`, &r); code != 201 || !r.Result.Passed {
			t.Fatalf("submit: %d %+v", code, r)
		}
		resp := w.Get("/api/v1/results/"+r.Result.ID+"/trace", nil)
		raw := readAll(t, resp)
		b, _ := json.Marshal(answers)
		sum := sha256.Sum256(b)
		if unkeyed := hex.EncodeToString(sum[:]); strings.Contains(raw, unkeyed) {
			t.Errorf("the record holds the unkeyed hash of the answers:\n%s", raw)
		}
		if !strings.Contains(raw, `"answers":"hmac-sha256:`) {
			t.Errorf("the record lacks the keyed digest of the answers:\n%s", raw)
		}
	})
}

// TestAttemptLimitsAndReveal: a benchmark that allows two attempts, an
// hour apart, and reveals only pass or fail: a failed attempt shows no
// score anywhere, a third attempt is refused, and so is one within the
// hour.
func TestAttemptLimitsAndReveal(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-limits", versioned(50, "limited", "complex_benchmark", "benchmark_handler", "1.0.0",
			benchmarkConfig("A")+"  max_attempts: 2\n  retry_after_hours: 1\n  reveal: pass_fail\n"))
		a := w.agent("limited-1").asCandidate(t)
		const ev = "/api/v1/evaluations/limited"
		attempt := func() pinnedResult {
			t.Helper()
			if code := a.call("POST", ev+"/register", "", nil); code != 201 {
				t.Fatalf("register: %d", code)
			}
			a.call("POST", ev+"/start", "", nil)
			var r pinnedResult
			if code := a.call("POST", ev+"/submit", `{"answers":{"q1":"B"}}`, &r); code != 201 || r.Result.Passed {
				t.Fatalf("a wrong answer: %d %+v", code, r)
			}
			return r
		}
		r := attempt()
		if r.Result.Score != nil {
			t.Errorf("a failed attempt shows its score %v", *r.Result.Score)
		}
		raw := readAll(t, w.Get("/api/v1/results/"+r.Result.ID+"/trace", nil))
		if strings.Contains(raw, "0 of 10") || strings.Contains(raw, "points") {
			t.Errorf("the record of a failed attempt reveals points:\n%s", raw)
		}
		var e errorResponse
		if code := a.call("POST", ev+"/register", "", &e); code != 409 || e.ErrorDetail.Code != "retry_later" {
			t.Errorf("registering again at once: %d %s, want 409 retry_later", code, e.ErrorDetail.Code)
		}
		w.clock.Advance(61 * time.Minute)
		attempt()
		w.clock.Advance(61 * time.Minute)
		if code := a.call("POST", ev+"/register", "", &e); code != 409 || e.ErrorDetail.Code != "attempts_exhausted" {
			t.Errorf("a third attempt: %d %s, want 409 attempts_exhausted", code, e.ErrorDetail.Code)
		}
	})
}

// TestPointsRevealPassFailByDefault: a benchmark that awards points and
// names no reveal shows of a failed attempt only that it failed: no score
// in the result, its details, its reason or its execution record, to the
// agent itself as to anyone.
func TestPointsRevealPassFailByDefault(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-default-reveal", versioned(52, "default-reveal", "complex_benchmark", "benchmark_handler", "1.0.0", benchmarkConfig("A")))
		a := w.agent("default-reveal-1").asCandidate(t)
		const ev = "/api/v1/evaluations/default-reveal"
		a.call("POST", ev+"/register", "", nil)
		a.call("POST", ev+"/start", "", nil)
		var r pinnedResult
		if code := a.call("POST", ev+"/submit", `{"answers":{"q1":"B"}}`, &r); code != 201 || r.Result.Passed {
			t.Fatalf("a wrong answer: %d %+v", code, r)
		}
		if r.Result.Score != nil {
			t.Errorf("a failed attempt shows its score %v", *r.Result.Score)
		}
		for who, read := range map[string]func(string) string{
			"itself": func(p string) string {
				var raw json.RawMessage
				a.call("GET", p, "", &raw)
				return string(raw)
			},
			"anyone": func(p string) string { return readAll(t, w.Get(p, nil)) },
		} {
			for _, p := range []string{"/api/v1/results/" + r.Result.ID, "/api/v1/results/" + r.Result.ID + "/trace"} {
				if body := read(p); strings.Contains(body, "of 10") || strings.Contains(body, `"score":0`) {
					t.Errorf("%s reads the score at %s:\n%s", who, p, body)
				}
			}
		}
	})
}

// TestFixedPositionsPassNoMoreThanChance: choices are shuffled per
// attempt, so always answering the first (or the last) choice passes a
// four-question, four-choice benchmark about as often as guessing does
// (1 in 256), not every time.
func TestFixedPositionsPassNoMoreThanChance(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		var cfg strings.Builder
		cfg.WriteString("  passing_score: 100\n  time_limit_minutes: 30\n  questions:\n")
		for i := range 4 {
			fmt.Fprintf(&cfg, "    - id: q%d\n      prompt: \"Pick.\"\n      choices: [\"right\", \"w1\", \"w2\", \"w3\"]\n      answer: \"right\"\n      points: 1\n", i)
		}
		w.resync(t, "c-four", versioned(51, "four-by-four", "complex_benchmark", "benchmark_handler", "1.0.0", cfg.String()))
		const ev = "/api/v1/evaluations/four-by-four"
		for _, strategy := range []string{"first", "last"} {
			a := w.agent("fixed-" + strategy)
			passes := 0
			for range 200 {
				a.call("POST", ev+"/register", "", nil)
				var st struct {
					Questions []struct {
						ID      string   `json:"id"`
						Choices []string `json:"choices"`
					} `json:"questions"`
				}
				a.call("POST", ev+"/start", "", &st)
				answers := map[string]string{}
				for _, q := range st.Questions {
					answers[q.ID] = q.Choices[0]
					if strategy == "last" {
						answers[q.ID] = q.Choices[len(q.Choices)-1]
					}
				}
				body, _ := json.Marshal(map[string]any{"answers": answers})
				var r resultBody
				a.call("POST", ev+"/submit", string(body), &r)
				if r.Result.Passed {
					passes++
				}
			}
			// Chance: 200/256 ≈ 0.8 passes; 8 or more happens with
			// probability below 1e-5.
			if passes >= 8 {
				t.Errorf("always the %s choice passed %d of 200 attempts; chance is about 1", strategy, passes)
			}
		}
	})
}

// TestAnonymousReadsOfAPassFailResult: results recorded while a benchmark
// revealed scores, read after its SIP changed to the default (pass or fail
// only), show no score, maximum, per-item grade, goal check or reason
// written from them, in any field of any read: the API's result, record,
// list, job and statistics, and the result, agent, evaluation and
// statistics pages;
// to anyone, to another agent, and of a failed attempt to the agent
// itself; the pass's credential, to anyone and another agent. Only the
// agent reads the score of its own pass.
func TestAnonymousReadsOfAPassFailResult(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		const base = "https://registry.test"
		w := newWorldWith(t, s, func(c *api.Config) { c.Issuer, c.BaseURL = testIssuer(t, base), base })
		const ev = "/api/v1/evaluations/turned"
		w.resync(t, "c-score", versioned(53, "turned", "complex_benchmark", "benchmark_handler", "1.0.0", benchmarkConfig("A")+"  reveal: score\n"))
		take := func(name, answer string) (*testAgent, pinnedResult) {
			a := w.agent(name).asCandidate(t)
			a.call("POST", ev+"/register", "", nil)
			a.call("POST", ev+"/start", "", nil)
			var r pinnedResult
			if code := a.call("POST", ev+"/submit", `{"answers":{"q1":"`+answer+`"}}`, &r); code != 201 || r.Result.Passed != (answer == "A") {
				t.Fatalf("%s submit: %d %+v", name, code, r)
			}
			if r.Result.Score == nil {
				t.Fatalf("%s: under reveal: score the attempt has no score", name)
			}
			return a, r
		}
		failer, failed := take("turned-fail", "B")
		passer, passed := take("turned-pass", "A")
		w.resync(t, "c-pass-fail", versioned(53, "turned", "complex_benchmark", "benchmark_handler", "1.1.0", benchmarkConfig("A")))

		scoreRE := regexp.MustCompile(`"(max_)?score":\s*-?\d|\d+ / 10\b|\bof 10 points|id="(scores|best)"|Median score</th>.*\d+%</td></tr>`)
		other := w.agent("turned-reader")
		// Plain requests, as a browser or a script sends them.
		get := func(p, key string) string {
			req, _ := http.NewRequest("GET", w.BaseURL+p, nil)
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 {
				t.Errorf("GET %s: %d", p, resp.StatusCode)
			}
			return readAll(t, resp)
		}
		readers := map[string]func(string) string{
			"anyone":        func(p string) string { return get(p, "") },
			"another agent": func(p string) string { return get(p, other.key) },
		}
		paths := func(a *testAgent, id string) []string {
			return []string{"/api/v1/results/" + id, "/api/v1/results/" + id + "/trace", ev + "/results?agent_id=" + a.id(t),
				"/results/" + id, "/agents/" + a.name, "/evaluations/SIP-53", "/evaluations/SIP-53/stats",
				"/evaluations/SIP-53/stats?asserted=include", ev + "/stats", ev + "/stats?asserted=include"}
		}
		for who, read := range readers {
			for _, r := range []struct {
				name string
				a    *testAgent
				id   string
			}{{"failed", failer, failed.Result.ID}, {"passed", passer, passed.Result.ID}} {
				t.Run(who+" reads the "+r.name+" attempt", func(t *testing.T) {
					for _, p := range paths(r.a, r.id) {
						if body := read(p); scoreRE.MatchString(body) {
							t.Errorf("%s: got a score %q, want none", p, scoreRE.FindString(body))
						}
					}
				})
			}
		}
		// The pass's credential, which anyone it is shown to reads.
		for who, read := range readers {
			body := read("/api/v1/results/" + passed.Result.ID + "/credential")
			if !strings.Contains(body, "credentialSubject") || strings.Contains(body, "ScaledScore") || strings.Contains(body, `"value"`) {
				t.Errorf("%s reads a score in the credential of a pass: %s", who, body)
			}
		}
		for _, p := range paths(failer, failed.Result.ID)[:3] {
			if body := get(p, failer.key); scoreRE.MatchString(body) {
				t.Errorf("the agent reads the score of its failed attempt at %s: %q", p, scoreRE.FindString(body))
			}
		}
		var own pinnedResult
		if passer.call("GET", "/api/v1/results/"+passed.Result.ID, "", &own); own.Result.Score == nil || *own.Result.Score != 10 {
			t.Errorf("the agent does not read the score of its own pass: %+v", own.Result)
		}
	})
}
