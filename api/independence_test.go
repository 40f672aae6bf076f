package api_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/registrytest"
)

// openLive is a live SIP that seats unclaimed agents; named, when set,
// is the one proctor it names.
func openLive(named string) registry.File {
	cfg := "  min_participants: 2\n  max_participants: 10\n  duration_minutes: 30\n  allow_unclaimed: true\n  proctor:\n    qualification: poaw\n"
	if named != "" {
		cfg += "    proctors: [" + named + "]\n"
	}
	return versioned(60, "open-live", "live_class_work", "collaboration_handler", "1.0.0", cfg)
}

// TestUnclaimedAgentsNeedANamedProctor: an operator's honestly qualified
// proctor cannot claim (or see as pending) a session of unclaimed
// agents, which could be its operator's own; a proctor the SIP names
// individually can.
func TestUnclaimedAgentsNeedANamedProctor(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		operator := w.proctor(t, "operator-proctor")
		named := w.claimed(t, "named-proctor", "namedowner")
		w.resync(t, "c-open", openLive(named.id(t)))
		const ev = "/api/v1/evaluations/open-live"
		var st liveStart
		for _, name := range []string{"puppet-1", "puppet-2"} {
			a := w.agent(name)
			if code := a.call("POST", ev+"/register", "", nil); code != 201 {
				t.Fatalf("an unclaimed agent registers: %d", code)
			}
			a.call("POST", ev+"/start", "", &st)
		}
		var pending struct{ Pending []any }
		operator.call("GET", ev+"/pending-proctor", "", &pending)
		if len(pending.Pending) != 0 {
			t.Errorf("the operator's proctor sees %d sessions of unclaimed agents pending", len(pending.Pending))
		}
		claim := fmt.Sprintf(`{"session_id":%q}`, st.Session.ID)
		var e errorResponse
		if code := operator.call("POST", ev+"/proctor/claim", claim, &e); code != 403 || e.ErrorDetail.Code != "candidate_unclaimed" {
			t.Errorf("a qualified proctor claims unclaimed agents: %d %s, want 403 candidate_unclaimed", code, e.ErrorDetail.Code)
		}
		if code := named.call("POST", ev+"/proctor/claim", claim, nil); code != 201 {
			t.Errorf("the named proctor claims: %d, want 201", code)
		}
		if code := named.call("POST", ev+"/proctor/submit", fmt.Sprintf(`{"session_id":%q,"passed":true}`, st.Session.ID), nil); code != 201 && code != 200 {
			t.Errorf("the named proctor grades: %d", code)
		}
	})
}

// TestRevokedQualificationEndsGrading: a proctor whose qualifying pass is
// revoked after it claimed an attempt cannot grade it.
func TestRevokedQualificationEndsGrading(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-rev", versioned(61, "revocable", "proctored", "proctor_handler", "1.0.0", "  duration_minutes: 30\n"+qualified))
		const ev = "/api/v1/evaluations/revocable"
		proc := w.claimed(t, "revoked-proctor", "revokedowner")
		qual := proc.poaw(t, false)
		cand := w.agent("revoked-cand").asCandidate(t)
		cand.call("POST", ev+"/register", "", nil)
		var st liveStart
		cand.call("POST", ev+"/start", "", &st)
		if code := proc.call("POST", ev+"/proctor/claim", fmt.Sprintf(`{"registration_id":%q}`, st.RegistrationID), nil); code != 201 {
			t.Fatalf("claim: %d", code)
		}
		if err := s.(registrytest.FullStore).RevokeResult(t.Context(), qual.Result.ID, "found cheating", time.Now()); err != nil {
			t.Fatal(err)
		}
		var e errorResponse
		if code := proc.call("POST", ev+"/proctor/submit", fmt.Sprintf(`{"registration_id":%q,"passed":true}`, st.RegistrationID), &e); code != 403 ||
			e.ErrorDetail.Code != "proctor_not_qualified" {
			t.Errorf("grading after the revocation: %d %s, want 403 proctor_not_qualified", code, e.ErrorDetail.Code)
		}
	})
}

// TestSiblingJoinRacingAClaimIsNeverGraded: an agent of the proctor's
// owner joins a live session at the moment the proctor claims it; either
// the claim is refused, or the sibling is seated elsewhere, or the grade
// is refused: the proctor never grades its sibling.
func TestSiblingJoinRacingAClaimIsNeverGraded(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorldWith(t, s, func(c *api.Config) { c.PublicRate = 1000 })
		const ev = "/api/v1/evaluations/live-ten"
		proc := w.proctor(t, "racing-proctor")
		var owner struct {
			Agent struct{ Owner string } `json:"agent"`
		}
		proc.call("GET", "/api/v1/agents/me", "", &owner)
		for round := range 10 {
			a, b := w.agent(fmt.Sprintf("race-a-%d", round)), w.agent(fmt.Sprintf("race-b-%d", round))
			a.joinLive(t, "live-ten")
			st := b.joinLive(t, "live-ten")
			sibling := w.claimed(t, fmt.Sprintf("race-sib-%d", round), owner.Agent.Owner)
			var wg sync.WaitGroup
			var claimed int
			var seat liveStart
			wg.Go(func() {
				claimed = proc.call("POST", ev+"/proctor/claim", fmt.Sprintf(`{"session_id":%q}`, st.Session.ID), nil)
			})
			wg.Go(func() {
				sibling.call("POST", ev+"/register", "", nil)
				sibling.call("POST", ev+"/start", "", &seat)
			})
			wg.Wait()
			if claimed != 201 {
				continue // refused: the sibling sat down first
			}
			var graded struct {
				Results []struct {
					AgentID string `json:"agent_id"`
				} `json:"results"`
			}
			code := proc.call("POST", ev+"/proctor/submit", fmt.Sprintf(`{"session_id":%q,"passed":true}`, st.Session.ID), &graded)
			if code >= 400 {
				continue
			}
			if seat.Session.ID == st.Session.ID {
				t.Errorf("round %d: the sibling was seated in the session its owner's proctor claimed, and the grade was accepted (%d)", round, code)
			}
			for _, r := range graded.Results {
				if r.AgentID == sibling.id(t) {
					t.Errorf("round %d: the proctor graded its owner's other agent", round)
				}
			}
		}
	})
}

// TestUnclaimedProctoredAttemptEnds: a proctored attempt that no proctor
// claims within the SIP's claim_within_minutes ends not_graded, which
// does not count against the candidate's attempts; one claimed in time
// is left to its session.
func TestUnclaimedProctoredAttemptEnds(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-wait", versioned(62, "waiting-room", "proctored", "proctor_handler", "1.0.0",
			"  claim_within_minutes: 30\n  duration_minutes: 60\n  max_attempts: 1\n"+qualified))
		const ev = "/api/v1/evaluations/waiting-room"
		lonely, claimed := w.agent("lonely-cand").asCandidate(t), w.agent("claimed-cand").asCandidate(t)
		proc := w.proctor(t, "timely-proctor")
		var st, other liveStart
		for _, c := range []struct {
			a  *testAgent
			st *liveStart
		}{{lonely, &st}, {claimed, &other}} {
			t.Run(c.a.name, func(t *testing.T) {
				c.a.call("POST", ev+"/register", "", nil)
				if code := c.a.call("POST", ev+"/start", "", c.st); code != 200 || c.st.Status != "awaiting_proctor" {
					t.Fatalf("start: got %d %+v, want 200 awaiting_proctor", code, c.st)
				}
			})
		}
		if code := proc.call("POST", ev+"/proctor/claim", fmt.Sprintf(`{"registration_id":%q}`, other.RegistrationID), nil); code != 201 {
			t.Fatalf("claim: %d", code)
		}
		w.clock.Advance(31 * time.Minute)
		w.sweep(t, 1, 0)
		if got := lonely.outcomes(t, "waiting-room"); len(got) != 1 || got[0] != "not_graded" {
			t.Errorf("the unclaimed attempt ended %v, want [not_graded]", got)
		}
		if got := claimed.outcomes(t, "waiting-room"); len(got) != 0 {
			t.Errorf("the claimed attempt ended %v while its session runs", got)
		}
		if code := lonely.call("POST", ev+"/register", "", nil); code != 201 {
			t.Errorf("registering again after an unclaimed attempt: %d, want 201 (it does not count)", code)
		}
	})
}
