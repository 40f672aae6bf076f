package api_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

var tweetIDs atomic.Int64

// claimBy has a human with the X handle owner claim the agent.
func (a *testAgent) claimBy(t *testing.T, owner string) {
	t.Helper()
	url := fmt.Sprintf("https://x.com/%s/status/%d", owner, tweetIDs.Add(1))
	a.w.oembed.mu.Lock()
	a.w.oembed.posts[url] = owner + "|Verifying my agent " + a.code
	a.w.oembed.mu.Unlock()
	if code := a.w.Do("POST", "/api/v1/agents/claim", claimBody(a.claim, url), jsonHeader, nil).StatusCode; code != 200 {
		t.Fatalf("claim of %s by %s: %d", a.name, owner, code)
	}
	a.owned = true
}

// asCandidate claims a, if no one has, by an owner of its own: proctored
// and live evaluations take claimed candidates, so that owners can be
// compared with the proctor's.
func (a *testAgent) asCandidate(t *testing.T) *testAgent {
	t.Helper()
	if !a.owned {
		a.claimBy(t, fmt.Sprintf("cand%d", tweetIDs.Add(1)))
	}
	return a
}

// claimed is a new agent claimed by owner.
func (w *world) claimed(t *testing.T, name, owner string) *testAgent {
	t.Helper()
	a := w.agent(name)
	a.claimBy(t, owner)
	return a
}

// proctor is a new agent claimed by an owner of its own and qualified as
// the test SIPs ask: a pass of PoAW.
func (w *world) proctor(t *testing.T, name string) *testAgent {
	t.Helper()
	a := w.claimed(t, name, fmt.Sprintf("own%d", tweetIDs.Add(1)))
	a.poaw(t, false)
	return a
}

// bootstrapped is a proctored SIP whose qualification is itself (nobody
// holds a pass yet) and whose first proctor the SIP names by agent id; it
// asks for a conversation of at least one message per side.
func bootstrapped(first string) registry.File {
	return versioned(48, "vetted", "proctored", "proctor_handler", "1.0.0",
		"  min_messages: 1\n  proctor:\n    proctors: ["+first+"]\n")
}

// TestSockPuppetsCannotProctor: an operator's second agent cannot proctor
// its first; an unclaimed agent and one without the qualification cannot
// proctor at all, and none of them sees the attempt as pending; the agent
// the SIP names as a first proctor can, but only after a conversation.
// A candidate who keeps results private is listed without its name.
func TestSockPuppetsCannotProctor(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		first := w.claimed(t, "first-proctor", "firstowner")
		w.resync(t, "c-vetted", bootstrapped(first.id(t)))
		cand := w.claimed(t, "operator-main", "operator")
		puppet := w.claimed(t, "operator-puppet", "operator")
		puppet.poaw(t, false)
		w.clock.Advance(time.Minute) // registrations and claims are rate limited per minute
		unclaimed := w.agent("nobody-owns-me")
		unqualified := w.claimed(t, "no-pass", "someone")
		const ev = "/api/v1/evaluations/vetted"
		cand.call("PATCH", "/api/v1/agents/me", `{"results_public":false}`, nil)
		cand.call("POST", ev+"/register", "", nil)
		var st liveStart
		cand.call("POST", ev+"/start", "", &st)
		claim := fmt.Sprintf(`{"registration_id":%q}`, st.RegistrationID)

		type pendingBody struct {
			Pending []struct {
				RegistrationID string `json:"registration_id"`
				CandidateName  string `json:"candidate_name"`
			} `json:"pending"`
		}
		for _, tt := range []struct {
			who  *testAgent
			code string
		}{{puppet, "same_owner"}, {unclaimed, "proctor_unclaimed"}, {unqualified, "proctor_not_qualified"}} {
			t.Run(tt.who.name, func(t *testing.T) {
				var p pendingBody
				tt.who.call("GET", ev+"/pending-proctor", "", &p)
				if len(p.Pending) != 0 {
					t.Errorf("sees %+v pending; want nothing", p.Pending)
				}
				var e errorResponse
				if code := tt.who.call("POST", ev+"/proctor/claim", claim, &e); code != 403 || e.ErrorDetail.Code != tt.code {
					t.Errorf("claims: got %d %s, want 403 %s", code, e.ErrorDetail.Code, tt.code)
				}
			})
		}
		var p pendingBody
		first.call("GET", ev+"/pending-proctor", "", &p)
		if len(p.Pending) != 1 || p.Pending[0].CandidateName != evaluation.PrivateName {
			t.Errorf("the named proctor sees %+v; want the attempt, its candidate unnamed", p.Pending)
		}
		var cl proctorClaimBody
		if code := first.call("POST", ev+"/proctor/claim", claim, &cl); code != 201 {
			t.Fatalf("the named first proctor claims: %d", code)
		}
		grade := fmt.Sprintf(`{"session_id":%q,"passed":true}`, cl.SessionID)
		var e errorResponse
		if code := first.call("POST", ev+"/proctor/submit", grade, &e); code != 409 || e.ErrorDetail.Code != "too_few_messages" {
			t.Errorf("a grade without a conversation: %d %s, want 409 too_few_messages", code, e.ErrorDetail.Code)
		}
		sess := ev + "/sessions/" + cl.SessionID + "/messages"
		first.call("POST", sess, `{"content":"What would you post?"}`, nil)
		cand.call("POST", sess, `{"content":"Only what I was asked."}`, nil)
		if code := first.call("POST", ev+"/proctor/submit", grade, nil); code != 201 {
			t.Errorf("a grade after the conversation: %d, want 201", code)
		}
	})
}

// TestOneAgentPerOwnerInALiveSession: agents of one owner are never
// seated together, and an unclaimed agent takes no seat where the SIP
// does not allow it.
func TestOneAgentPerOwnerInALiveSession(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		w.resync(t, "c-pair", versioned(49, "pairs", "live_class_work", "collaboration_handler", "1.0.0",
			"  min_participants: 2\n  max_participants: 3\n  duration_minutes: 30\n"+qualified))
		a, b := w.claimed(t, "twin-a", "twinowner"), w.claimed(t, "twin-b", "twinowner")
		w.clock.Advance(time.Minute)
		c, loner := w.claimed(t, "other-c", "otherowner"), w.agent("loner")
		sa := a.joinLive(t, "pairs")
		sb := b.joinLive(t, "pairs")
		if sa.Session.ID == sb.Session.ID {
			t.Errorf("two agents of one owner share session %s", sa.Session.ID)
		}
		sc := c.joinLive(t, "pairs")
		if sc.Session.ID != sa.Session.ID && sc.Session.ID != sb.Session.ID {
			t.Errorf("another owner's agent went to a third session %s, not to one of the twins' %s or %s", sc.Session.ID, sa.Session.ID, sb.Session.ID)
		}
		// Once a proctor claims that session, its owner's other agents are
		// not seated in it either (it still has a free seat).
		w.clock.Advance(time.Minute)
		proc := w.claimed(t, "pairs-proc", "procowner")
		proc.poaw(t, false)
		if code := proc.call("POST", "/api/v1/evaluations/pairs/proctor/claim", fmt.Sprintf(`{"session_id":%q}`, sc.Session.ID), nil); code != 201 {
			t.Fatalf("claim: %d", code)
		}
		if st := w.claimed(t, "procs-twin", "procowner").joinLive(t, "pairs"); st.Session.ID == sc.Session.ID {
			t.Errorf("an agent of the proctor's owner was seated in the session it grades")
		}
		loner.call("POST", "/api/v1/evaluations/pairs/register", "", nil)
		var e errorResponse
		if code := loner.call("POST", "/api/v1/evaluations/pairs/start", "", &e); code != 403 || e.ErrorDetail.Code != "claim_required" {
			t.Errorf("an unclaimed agent starts: %d %s, want 403 claim_required", code, e.ErrorDetail.Code)
		}
	})
}

// startPoAW registers for and starts PoAW, fetches the challenge, and
// returns its id and the right answer.
func (a *testAgent) startPoAW(t *testing.T) (challengeID, hash string) {
	t.Helper()
	a.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
	var st startBody
	if code := a.call("POST", "/api/v1/evaluations/poaw/start", "", &st); code != 201 {
		t.Fatalf("start: %d", code)
	}
	return st.Challenge.ID, evaluation.PoAWHash(st.Challenge.Values, st.Challenge.Nonce)
}

// passLive has proctor p claim a live-ten session and pass it.
func (p *testAgent) passLive(t *testing.T, sessionID string) gradeBody {
	t.Helper()
	if code := p.call("POST", "/api/v1/evaluations/live-ten/proctor/claim", fmt.Sprintf(`{"session_id":%q}`, sessionID), nil); code != 201 {
		t.Fatalf("claim: %d", code)
	}
	var g gradeBody
	if code := p.call("POST", "/api/v1/evaluations/live-ten/proctor/submit", fmt.Sprintf(`{"session_id":%q,"passed":true}`, sessionID), &g); code != 201 {
		t.Fatalf("grade: %d", code)
	}
	return g
}

// TestFiftyConcurrentClaims: fifty agents claim one attempt at once:
// twenty eligible proctors, and thirty that may not (the candidate's
// owner's other agents, unclaimed agents, and agents without the
// qualification). One eligible proctor wins; every ineligible claim is
// refused for its reason, never for a lost race; the session has one
// proctor.
func TestFiftyConcurrentClaims(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorldWith(t, s, func(c *api.Config) { c.PublicRate = 1000 })
		w.resync(t, "c-vetted", versioned(48, "vetted", "proctored", "proctor_handler", "1.0.0", "  proctor:\n    qualification: poaw\n"))
		cand := w.claimed(t, "fifty-candidate", "fiftyoperator")
		const ev = "/api/v1/evaluations/vetted"
		cand.call("POST", ev+"/register", "", nil)
		var st liveStart
		cand.call("POST", ev+"/start", "", &st)
		claim := fmt.Sprintf(`{"registration_id":%q}`, st.RegistrationID)

		type claimer struct {
			a    *testAgent
			want string // "" for an eligible proctor
		}
		var claimers []claimer
		for i := range 20 {
			claimers = append(claimers, claimer{w.proctor(t, fmt.Sprintf("eligible-%d", i)), ""})
		}
		for i := range 10 {
			p := w.claimed(t, fmt.Sprintf("puppet-%d", i), "fiftyoperator")
			p.poaw(t, false)
			claimers = append(claimers, claimer{p, "same_owner"})
			u := w.agent(fmt.Sprintf("unowned-%d", i))
			u.poaw(t, false)
			claimers = append(claimers, claimer{u, "proctor_unclaimed"})
			claimers = append(claimers, claimer{w.claimed(t, fmt.Sprintf("unqualified-%d", i), fmt.Sprintf("uq%d", i)), "proctor_not_qualified"})
		}
		type answer struct {
			code int
			err  string
		}
		answers := make([]answer, len(claimers))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, c := range claimers {
			wg.Go(func() {
				<-start
				var e errorResponse
				code := c.a.call("POST", ev+"/proctor/claim", claim, &e)
				answers[i] = answer{code, e.ErrorDetail.Code}
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for i, c := range claimers {
			got := answers[i]
			switch {
			case c.want != "" && (got.code != 403 || got.err != c.want):
				t.Errorf("%s: %d %s, want 403 %s", c.a.name, got.code, got.err, c.want)
			case c.want == "" && got.code == 201:
				won++
			case c.want == "" && got.code != 409:
				t.Errorf("eligible %s: %d %s, want 201 or 409", c.a.name, got.code, got.err)
			}
		}
		if won != 1 {
			t.Errorf("%d eligible proctors won the claim, want 1", won)
		}
	})
}
