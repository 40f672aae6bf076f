package api_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

type outcomeList struct {
	Results []struct {
		ID                string `json:"id"`
		AgentID           string `json:"agent_id"`
		Outcome           string `json:"outcome"`
		Passed            bool   `json:"passed"`
		EvaluationVersion string `json:"evaluation_version"`
	} `json:"results"`
}

// outcomes lists the outcomes of the agent's results at an evaluation,
// newest first.
func (a *testAgent) outcomes(t *testing.T, id string) []string {
	t.Helper()
	var l outcomeList
	if code := a.call("GET", "/api/v1/evaluations/"+id+"/results?agent_id="+a.id(t), "", &l); code != 200 {
		t.Fatalf("results of %s: %d", id, code)
	}
	var out []string
	for _, r := range l.Results {
		out = append(out, r.Outcome)
	}
	return out
}

// id is the agent's id.
func (a *testAgent) id(t *testing.T) string {
	t.Helper()
	var me struct {
		Agent struct {
			ID string `json:"id"`
		} `json:"agent"`
	}
	if code := a.call("GET", "/api/v1/agents/me", "", &me); code != 200 {
		t.Fatalf("me: %d", code)
	}
	return me.Agent.ID
}

// sweep runs the sweeper once and checks what it ended.
func (w *world) sweep(t *testing.T, attempts, sessions int) {
	t.Helper()
	got, err := w.worker.Service.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got.Attempts != attempts || got.Sessions != sessions {
		t.Errorf("sweep ended %d attempts and %d sessions, want %d and %d", got.Attempts, got.Sessions, attempts, sessions)
	}
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// TestAttemptsPastTheirDeadlineExpire: an attempt started and never
// answered ends, once its deadline passes, with an expired result under
// its pinned version; the agent may register again. Registering again
// before the sweeper runs ends the old attempt first.
func TestAttemptsPastTheirDeadlineExpire(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a, b := w.agent("late-1").asCandidate(t), w.agent("late-2").asCandidate(t)
		a.poaw(t, false)
		for _, id := range []string{"poaw", "ai-safety-benchmark", "honest-uncertainty-certification"} {
			if code := a.call("POST", "/api/v1/evaluations/"+id+"/register", "", nil); code != 201 {
				t.Fatalf("register %s: %d", id, code)
			}
			if code := a.call("POST", "/api/v1/evaluations/"+id+"/start", "", nil); code/100 != 2 {
				t.Fatalf("start %s: %d", id, code)
			}
		}
		b.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
		b.call("POST", "/api/v1/evaluations/poaw/start", "", nil)

		w.sweep(t, 0, 0) // nothing is due yet
		w.clock.Advance(20 * time.Second)
		// b registers again before any sweep: its old attempt ends first.
		if code := b.call("POST", "/api/v1/evaluations/poaw/register", "", nil); code != 201 {
			t.Errorf("registering past the deadline: %d, want 201 (a new attempt)", code)
		}
		if got := b.outcomes(t, "poaw"); !equal(got, []string{"expired"}) {
			t.Errorf("b's outcomes %v, want [expired]", got)
		}
		w.sweep(t, 1, 0) // a's PoAW; the others still have time
		w.clock.Advance(31 * time.Minute)
		w.sweep(t, 2, 0) // the benchmark and the certification
		w.sweep(t, 0, 0) // and nothing twice

		for id, want := range map[string][]string{
			"poaw":                             {"expired", "passed"},
			"ai-safety-benchmark":              {"expired"},
			"honest-uncertainty-certification": {"expired"},
		} {
			if got := a.outcomes(t, id); !equal(got, want) {
				t.Errorf("%s outcomes %v, want %v", id, got, want)
			}
			if st, _, _ := a.status(t, id); st != "available" && !(id == "poaw" && st == "completed") {
				t.Errorf("%s status after expiry %q, want available", id, st)
			}
		}
		// The certification's job will never be judged.
		var job jobBody
		var st certStart
		a.call("POST", "/api/v1/evaluations/honest-uncertainty-certification/register", "", nil)
		a.call("POST", "/api/v1/evaluations/honest-uncertainty-certification/start", "", &st)
		w.clock.Advance(31 * time.Minute)
		w.sweep(t, 1, 0)
		a.call("GET", "/api/v1/evaluations/honest-uncertainty-certification/jobs/"+st.JobID, "", &job)
		if job.Job.Status != "expired" {
			t.Errorf("job of an expired certification is %q, want expired", job.Job.Status)
		}
		// The record says why.
		var l outcomeList
		a.call("GET", "/api/v1/evaluations/ai-safety-benchmark/results?agent_id="+a.id(t), "", &l)
		var tr struct {
			Trace evaluation.Trace `json:"trace"`
		}
		w.Get("/api/v1/results/"+l.Results[0].ID+"/trace", &tr)
		if tr.Trace.ExitCode != evaluation.ExitTimeout || len(tr.Trace.Gates) != 2 || tr.Trace.Gates[1].Passed {
			t.Errorf("trace of an expired attempt: exit %d, gates %+v", tr.Trace.ExitCode, tr.Trace.Gates)
		}
	})
}

// TestUngradedSessionsEndNotGraded: a proctored session and a live
// session that nobody grades within the grace after their end end with a
// not_graded result for each participant, who may register again; a
// grade after that is refused.
func TestUngradedSessionsEndNotGraded(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-proc", versioned(44, "quick-proctor", "proctored", "proctor_handler", "1.0.0", "  duration_minutes: 10\n"+qualified))
		cand, proc := w.agent("waiting-1").asCandidate(t), w.proctor(t, "sleepy-proctor")
		cand.call("POST", "/api/v1/evaluations/quick-proctor/register", "", nil)
		var st liveStart
		cand.call("POST", "/api/v1/evaluations/quick-proctor/start", "", &st)
		var cl proctorClaimBody
		claim := fmt.Sprintf(`{"registration_id":%q}`, st.RegistrationID)
		if code := proc.call("POST", "/api/v1/evaluations/quick-proctor/proctor/claim", claim, &cl); code != 201 {
			t.Fatalf("claim: %d", code)
		}
		var sess liveStart
		cand.call("GET", "/api/v1/evaluations/quick-proctor/sessions/"+cl.SessionID, "", &sess)
		if sess.Session.EndsAt == nil || *sess.Session.EndsAt != w.clock.Now().Add(10*time.Minute).Format(time.RFC3339) {
			t.Errorf("proctored session ends_at %v, want the claim plus the SIP's 10 minutes", sess.Session.EndsAt)
		}

		a, b := w.agent("live-a"), w.agent("live-b")
		a.joinLive(t, "live-ten")
		b.joinLive(t, "live-ten")

		w.clock.Advance(10*time.Minute + evaluation.GradingGrace - time.Second)
		w.sweep(t, 0, 0) // the proctored session's grace runs to the second
		w.clock.Advance(time.Second)
		w.sweep(t, 0, 1)
		if got := cand.outcomes(t, "quick-proctor"); !equal(got, []string{"not_graded"}) {
			t.Errorf("candidate's outcomes %v, want [not_graded]", got)
		}
		grade := fmt.Sprintf(`{"registration_id":%q,"passed":true}`, st.RegistrationID)
		if code := proc.call("POST", "/api/v1/evaluations/quick-proctor/proctor/submit", grade, nil); code != 409 {
			t.Errorf("grading after the sweep: %d, want 409", code)
		}
		if code := cand.call("POST", "/api/v1/evaluations/quick-proctor/register", "", nil); code != 201 {
			t.Errorf("registering again after not_graded: %d, want 201", code)
		}

		w.clock.Advance(20 * time.Minute) // live-ten's session lasts 30 minutes
		w.sweep(t, 0, 1)
		for _, p := range []*testAgent{a, b} {
			if got := p.outcomes(t, "live-ten"); !equal(got, []string{"not_graded"}) {
				t.Errorf("%s outcomes %v, want [not_graded]", p.name, got)
			}
			if code := p.call("POST", "/api/v1/evaluations/live-ten/register", "", nil); code != 201 {
				t.Errorf("%s registering again: %d, want 201", p.name, code)
			}
		}
	})
}

// TestGradeRacingTheSweeper: a live session's grace runs out while its
// proctor's grade arrives. Whichever lands first decides: every
// participant ends with exactly one result, all graded or all not_graded.
func TestGradeRacingTheSweeper(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		proc := w.proctor(t, "racing-proctor")
		for round := range 4 {
			a, b := w.agent(fmt.Sprintf("racer-%d-a", round)), w.agent(fmt.Sprintf("racer-%d-b", round))
			a.joinLive(t, "live-ten")
			st := b.joinLive(t, "live-ten")
			claim := fmt.Sprintf(`{"session_id":%q}`, st.Session.ID)
			if code := proc.call("POST", "/api/v1/evaluations/live-ten/proctor/claim", claim, nil); code != 201 {
				t.Fatalf("claim: %d", code)
			}
			w.clock.Advance(30*time.Minute + evaluation.GradingGrace + time.Second)
			var code int
			var swept evaluation.Swept
			var err error
			var wg sync.WaitGroup
			wg.Go(func() {
				code = proc.call("POST", "/api/v1/evaluations/live-ten/proctor/submit", fmt.Sprintf(`{"session_id":%q,"passed":true}`, st.Session.ID), nil)
			})
			wg.Go(func() { swept, err = w.worker.Service.Sweep(t.Context()) })
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			want := "passed"
			switch {
			case code == 201 && swept.Sessions == 0:
			case code == 409 && swept.Sessions == 1:
				want = "not_graded"
			default:
				t.Fatalf("round %d: the grade got %d and the sweep ended %d sessions; want exactly one of them to win", round, code, swept.Sessions)
			}
			for _, p := range []*testAgent{a, b} {
				if got := p.outcomes(t, "live-ten"); !equal(got, []string{want}) {
					t.Errorf("round %d: %s outcomes %v, want [%s]", round, p.name, got, want)
				}
			}
		}
	})
}
