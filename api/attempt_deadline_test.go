package api_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// outcomesByRegistration is the agent's results at ref: their outcomes by
// registration id.
func outcomesByRegistration(a *testAgent, ref string) map[string][]string {
	var res struct {
		Results []struct {
			RegistrationID string `json:"registration_id"`
			Outcome        string `json:"outcome"`
		} `json:"results"`
	}
	a.call("GET", "/api/v1/evaluations/"+ref+"/results", "", &res)
	out := map[string][]string{}
	for _, r := range res.Results {
		out[r.RegistrationID] = append(out[r.RegistrationID], r.Outcome)
	}
	return out
}

// TestStartRegisterInAProctoredSessionPastItsClaimDeadline: a claimed
// proctored attempt keeps its claim deadline, so mid-session it is past
// its deadline, but its session, not a request, ends it: start
// {"register": true} resumes it as plain start does, even where
// register's rules would refuse a new one (here the SIP was deprecated).
func TestStartRegisterInAProctoredSessionPastItsClaimDeadline(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		cfg := "  claim_within_minutes: 5\n  duration_minutes: 60\n" + qualified
		w.resync(t, "c-talk-1", versioned(91, "talk", "proctored", "proctor_handler", "1.0.0", cfg))
		cand, proc := w.agent("cand-1").asCandidate(t), w.proctor(t, "proc-1")
		const ev = "/api/v1/evaluations/talk"
		if code := cand.call("POST", ev+"/register", "", nil); code != 201 {
			t.Fatalf("register: %d", code)
		}
		var st struct {
			RegistrationID string `json:"registration_id"`
			Status         string `json:"status"`
		}
		if code := cand.call("POST", ev+"/start", "", &st); code != 200 {
			t.Fatalf("start: %d", code)
		}
		var cl proctorClaimBody
		if code := proc.call("POST", ev+"/proctor/claim", fmt.Sprintf(`{"registration_id":%q}`, st.RegistrationID), &cl); code != 201 {
			t.Fatalf("claim: %d", code)
		}
		w.clock.Advance(10 * time.Minute) // past the 5 min claim window, inside the 60 min session
		next := versioned(91, "talk", "proctored", "proctor_handler", "1.1.0", cfg)
		w.resync(t, "c-talk-2", registry.File{Path: next.Path, Content: []byte(strings.Replace(string(next.Content), "status: active", "status: deprecated", 1))})
		var plainBody, regBody struct {
			Status string `json:"status"`
		}
		var e errorResponse
		plain := cand.call("POST", ev+"/start", "", &plainBody)
		withReg := cand.call("POST", ev+"/start", `{"register":true}`, &e)
		if withReg != plain {
			t.Errorf("in session past the claim deadline: start %d (%s), start {register:true} %d %s; want the same", plain, plainBody.Status, withReg, e.ErrorDetail.Code)
		}
		_ = regBody
	})
}

// TestStartsAtOnceOnAnOverdueAttempt: starts at once on one PoAW attempt
// whose challenge expired end it once (one expired result), and none
// answers 500.
func TestStartsAtOnceOnAnOverdueAttempt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a := w.agent("race-1")
		var first startBody
		if code := a.call("POST", "/api/v1/evaluations/poaw/start", `{"register":true}`, &first); code != 201 {
			t.Fatalf("start: %d", code)
		}
		w.clock.Advance(time.Minute)
		var mu sync.Mutex
		codes := map[string]int{}
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				var e errorResponse
				code := a.call("POST", "/api/v1/evaluations/poaw/start", "", &e)
				mu.Lock()
				codes[fmt.Sprintf("%d %s", code, e.ErrorDetail.Code)]++
				mu.Unlock()
			})
		}
		wg.Wait()
		for k := range codes {
			if k != "410 gone" && k != "409 not_registered" {
				t.Errorf("unexpected answer %q", k)
			}
		}
		if codes["410 gone"] == 0 {
			t.Errorf("answers %v: none said the attempt ran out of time (410 gone)", codes)
		}
		if got := outcomesByRegistration(a, "poaw")[first.RegistrationID]; len(got) != 1 || got[0] != "expired" {
			t.Errorf("results of the overdue attempt: %v, want one expired", got)
		}
	})
}

// TestLateSubmitRacesStart: a late answer racing a start on the same
// expired attempt leaves one result.
func TestLateSubmitRacesStart(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		for i := range 6 {
			a := w.agent(fmt.Sprintf("subrace-%d", i))
			var first startBody
			if code := a.call("POST", "/api/v1/evaluations/poaw/start", `{"register":true}`, &first); code != 201 {
				t.Fatalf("start: %d", code)
			}
			w.clock.Advance(time.Minute)
			hash := evaluation.PoAWHash(first.Challenge.Values, first.Challenge.Nonce)
			var wg sync.WaitGroup
			var sc, st int
			wg.Go(func() {
				sc = a.call("POST", "/api/v1/evaluations/poaw/submit", fmt.Sprintf(`{"challenge_id":%q,"hash":%q}`, first.Challenge.ID, hash), nil)
			})
			wg.Go(func() { st = a.call("POST", "/api/v1/evaluations/poaw/start", "", nil) })
			wg.Wait()
			got := outcomesByRegistration(a, "poaw")[first.RegistrationID]
			if len(got) != 1 || got[0] != "expired" || sc >= 500 || st >= 500 {
				t.Errorf("submit %d start %d results %v", sc, st, got)
			}
		}
	})
}

// TestStartRegisterAcrossTheDeadline: when the deadline passes between
// start {"register": true}'s look at the open registration and its start,
// the start ends the attempt and the request still opens a new one.
func TestStartRegisterAcrossTheDeadline(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		var armed atomic.Bool
		var wp atomic.Pointer[world]
		w := newWorldWith(t, s, nil, func(c *evaluation.Config) {
			prev := c.Now
			c.Now = func() time.Time {
				now := prev()
				if armed.CompareAndSwap(true, false) {
					wp.Load().clock.Advance(time.Minute)
				}
				return now
			}
		})
		wp.Store(w)
		a := w.agent("window-1")
		var first startBody
		if code := a.call("POST", "/api/v1/evaluations/poaw/start", `{"register":true}`, &first); code != 201 {
			t.Fatalf("start: %d", code)
		}
		armed.Store(true) // the next runtime clock read (RegisterAndStart's Overdue check) sees the old time
		var e errorResponse
		code := a.call("POST", "/api/v1/evaluations/poaw/start", `{"register":true}`, &e)
		if code != 201 {
			t.Errorf("start {register:true} across the deadline: %d %s, want 201 (a new registration)", code, e.ErrorDetail.Code)
		}
	})
}

// TestStartRegisterOnABenchmarkPastItsLimit: past its time limit a
// benchmark attempt is resumed by plain start (its answers will be late),
// and ended as expired and replaced by start {"register": true}.
func TestStartRegisterOnABenchmarkPastItsLimit(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-bench", versioned(92, "quiz", "complex_benchmark", "benchmark_handler", "1.0.0", benchmarkConfig("A")))
		a := w.agent("quiz-1")
		a.claimBy(t, "benchowner")
		var st startBody
		if code := a.call("POST", "/api/v1/evaluations/quiz/start", `{"register":true}`, &st); code != 200 && code != 201 {
			t.Fatalf("start: %d", code)
		}
		w.clock.Advance(31 * time.Minute)
		var p startBody
		plain := a.call("POST", "/api/v1/evaluations/quiz/start", "", &p)
		var r startBody
		withReg := a.call("POST", "/api/v1/evaluations/quiz/start", `{"register":true}`, &r)
		if plain != 200 || p.RegistrationID != st.RegistrationID {
			t.Errorf("plain start past the time limit: %d registration %s, want 200 and the open one %s", plain, p.RegistrationID, st.RegistrationID)
		}
		if (withReg != 200 && withReg != 201) || r.RegistrationID == "" || r.RegistrationID == st.RegistrationID {
			t.Errorf("start {register:true} past the time limit: %d registration %s, want a new one (not %s)", withReg, r.RegistrationID, st.RegistrationID)
		}
		if got := outcomesByRegistration(a, "quiz")[st.RegistrationID]; len(got) != 1 || got[0] != "expired" {
			t.Errorf("the first attempt's results %v, want one expired", got)
		}
	})
}

// TestStartEndsAnAttemptByItsPinnedTimeout: a registration pinned to a
// version with another timeout keeps its own deadline, and start ends it
// by that deadline only.
func TestStartEndsAnAttemptByItsPinnedTimeout(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		for _, tc := range []struct {
			name            string
			n               int
			pinned, current string
			after           time.Duration
			want            int
		}{
			{"pinned 15 s, now 300 s: over at 20 s", 93, "15", "300", 20 * time.Second, 410},
			{"pinned 300 s, now 15 s: open at 20 s", 94, "300", "15", 20 * time.Second, 200},
		} {
			t.Run(tc.name, func(t *testing.T) {
				w := newWorld(t, s)
				id := "vp" + tc.pinned
				w.resync(t, "c-"+id+"-1", versioned(tc.n, id, "simple_pass_fail", "poaw_handler", "1.0.0", "  timeout_seconds: "+tc.pinned+"\n"))
				a := w.agent("pin-" + tc.pinned)
				if code := a.call("POST", "/api/v1/evaluations/"+id+"/register", "", nil); code != 201 {
					t.Fatalf("register: %d", code)
				}
				w.resync(t, "c-"+id+"-2", versioned(tc.n, id, "simple_pass_fail", "poaw_handler", "1.1.0", "  timeout_seconds: "+tc.current+"\n"))
				var st startBody
				if code := a.call("POST", "/api/v1/evaluations/"+id+"/start", "", &st); code != 201 {
					t.Fatalf("start: %d", code)
				}
				w.clock.Advance(tc.after)
				var again startBody
				code := a.call("POST", "/api/v1/evaluations/"+id+"/start", "", &again)
				if code != tc.want {
					t.Errorf("pinned %s current %s: %d, want %d", tc.pinned, tc.current, code, tc.want)
				}
			})
		}
	})
}
