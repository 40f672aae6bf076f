package api_test

import (
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
)

// TestExpiredAttemptsCount: an attempt left to expire is an attempt; the
// registration that finds it overdue does not open another one beyond
// the limit or the wait.
func TestExpiredAttemptsCount(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-expiry", versioned(52, "once", "complex_benchmark", "benchmark_handler", "1.0.0",
			benchmarkConfig("A")+"  max_attempts: 1\n"),
			versioned(53, "daily", "complex_benchmark", "benchmark_handler", "1.0.0",
				benchmarkConfig("A")+"  retry_after_hours: 24\n"))
		for _, tc := range []struct{ sip, code string }{{"once", "attempts_exhausted"}, {"daily", "retry_later"}} {
			t.Run(tc.sip, func(t *testing.T) {
				a := w.agent("expiring-" + tc.sip).asCandidate(t)
				ev := "/api/v1/evaluations/" + tc.sip
				if code := a.call("POST", ev+"/register", "", nil); code != 201 {
					t.Fatalf("register: got %d, want 201", code)
				}
				if code := a.call("POST", ev+"/start", "", nil); code != 200 && code != 201 {
					t.Fatalf("start: got %d, want 200 or 201", code)
				}
				w.clock.Advance(31 * time.Minute) // past the 30-minute limit
				var e errorResponse
				if code := a.call("POST", ev+"/register", "", &e); code != 409 || e.ErrorDetail.Code != tc.code {
					t.Errorf("registering after the attempt expired: got %d %s, want 409 %s", code, e.ErrorDetail.Code, tc.code)
				}
			})
		}
	})
}

// TestAttemptsCountPerOwner: a claimed agent's attempts count with its
// owner's other agents, so a fresh agent does not reset the limit; nor
// does the handle spelled in other capitals (X handles ignore case, and
// X lets a person change how theirs is capitalised).
func TestAttemptsCountPerOwner(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-owner", versioned(54, "owned-once", "complex_benchmark", "benchmark_handler", "1.0.0",
			benchmarkConfig("A")+"  max_attempts: 1\n"))
		const ev = "/api/v1/evaluations/owned-once"
		first := w.claimed(t, "owned-first", "sameowner")
		if code := first.call("POST", ev+"/register", "", nil); code != 201 {
			t.Fatalf("register: %d", code)
		}
		first.call("POST", ev+"/start", "", nil)
		if code := first.call("POST", ev+"/submit", `{"answers":{"q1":"B"}}`, nil); code != 201 {
			t.Fatalf("submit: %d", code)
		}
		var e errorResponse
		sibling := w.claimed(t, "owned-second", "sameowner")
		if code := sibling.call("POST", ev+"/register", "", &e); code != 409 || e.ErrorDetail.Code != "attempts_exhausted" {
			t.Errorf("the owner's second agent: %d %s, want 409 attempts_exhausted", code, e.ErrorDetail.Code)
		}
		var re errorResponse
		recased := w.claimed(t, "owned-third", "SameOwner")
		if code := recased.call("POST", ev+"/register", "", &re); code != 409 || re.ErrorDetail.Code != "attempts_exhausted" {
			t.Errorf("the owner's agent claimed with the handle capitalised: %d %s, want 409 attempts_exhausted", code, re.ErrorDetail.Code)
		}
		if code := w.claimed(t, "owned-other", "otherowner").call("POST", ev+"/register", "", nil); code != 201 {
			t.Errorf("another owner's agent: %d, want 201", code)
		}
	})
}
