package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
)

// TestReviewStartRegisterOpenRegistration: with a registration already
// open, start {"register": true} should start it, as start without the
// body does ("registers first when no registration is open"). It is
// refused instead when register's rules no longer admit a new
// registration: a prerequisite's pass expired, or the evaluation was
// deprecated, after the agent registered.
func TestReviewStartRegisterOpenRegistration(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		const register = `{"register":true}`

		t.Run("a prerequisite's pass expired", func(t *testing.T) {
			a := w.agent("rev-prereq")
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
			b := w.agent("rev-deprecated")
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

// TestReviewStartRegisterAfterExpiry: what start does after a PoAW
// challenge expired (before the sweeper ended the attempt), with and
// without register.
func TestReviewStartRegisterAfterExpiry(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		for _, body := range []string{"", `{"register":true}`} {
			a := w.agent("rev-exp-" + map[string]string{"": "p", `{"register":true}`: "r"}[body])
			var first, again startBody
			if code := a.call("POST", "/api/v1/evaluations/poaw/start", `{"register":true}`, &first); code != 201 {
				t.Fatalf("start: %d", code)
			}
			w.clock.Advance(20 * time.Second)
			code := a.call("POST", "/api/v1/evaluations/poaw/start", body, &again)
			var res struct {
				Results []struct {
					Outcome string `json:"outcome"`
				} `json:"results"`
			}
			a.call("GET", "/api/v1/evaluations/poaw/results", "", &res)
			t.Logf("after expiry, start body %q: %d, same registration %v, new challenge %v, results %+v",
				body, code, again.RegistrationID == first.RegistrationID, again.Challenge.ID != first.Challenge.ID, res.Results)
		}
	})
}

// TestReviewStartRegisterLocksOut: a PoAW-like evaluation with
// retry_after_hours. After the challenge expired (the sweeper has not
// run), start without a body hands a new challenge on the open
// registration; start {"register": true} ends the attempt as expired
// and then refuses the agent for an hour.
func TestReviewStartRegisterLocksOut(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-cool", versioned(72, "cool-poaw", "simple_pass_fail", "poaw_handler", "1.0.0", "  timeout_seconds: 15\n  retry_after_hours: 1\n"))
		plain, reg := w.agent("rev-cool-p"), w.agent("rev-cool-r")
		for _, ag := range []*testAgent{plain, reg} {
			if code := ag.call("POST", "/api/v1/evaluations/cool-poaw/start", `{"register":true}`, nil); code != 201 {
				t.Fatalf("start: %d", code)
			}
		}
		w.clock.Advance(20 * time.Second)
		if code := plain.call("POST", "/api/v1/evaluations/cool-poaw/start", "", nil); code != 201 {
			t.Errorf("start without a body after expiry: %d, want 201 (a new challenge)", code)
		}
		var e errorResponse
		if code := reg.call("POST", "/api/v1/evaluations/cool-poaw/start", `{"register":true}`, &e); code != 201 {
			t.Errorf("start {register:true} after expiry: %d %s, want 201 as without the body", code, e.ErrorDetail.Code)
		}
	})
}
