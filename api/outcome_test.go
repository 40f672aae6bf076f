package api_test

import (
	"testing"

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
