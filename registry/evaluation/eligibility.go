package evaluation

import (
	"context"
	"slices"
	"strings"

	"github.com/sipregistry/sip/registry"
)

// Who may proctor or grade, decided here for every proctored kind
// (proctored evaluations, live class work, a benchmark's free answers):
//
//   - the proctor is claimed by a human owner (X verification);
//   - it is named by id in the SIP (config.proctor.proctors, how the first
//     proctors of a new evaluation are named) or holds a valid pass of the
//     qualification (config.proctor.qualification, else the evaluation
//     itself);
//   - it is not a candidate or participant, and no candidate or
//     participant has its owner;
//   - a candidate or participant no human has claimed (proctored
//     attempts take them only with config.allow_unclaimed) is graded only
//     by a proctor the SIP names individually: without owners there is
//     nothing to compare, and a qualified proctor could pass its
//     operator's own unclaimed agents.
//
// Claims and grades check all of it again in the store's transaction
// that records them, under the lock joins take (seatCheck), so a seat
// taken at the moment of a claim, or a qualification revoked after it,
// never yields a grade.
//
// A pass is worth what it costs to fake: with these rules an operator's
// second agent cannot grade the first.

// proctoringOf is def's proctoring rules (none set: the defaults).
func proctoringOf(def *Definition) registry.ProctoringConfig {
	if def.Config.Proctoring == nil {
		return registry.ProctoringConfig{}
	}
	return *def.Config.Proctoring
}

// mayProctor decides whether proctor may proctor attempts at def at all,
// whoever the candidates are. It returns a refusal saying why not.
func (s *Service) mayProctor(ctx context.Context, def *Definition, proctor *registry.Agent) error {
	if !proctor.Claimed() {
		return forbidden("proctor_unclaimed", "a proctor must be claimed by its human owner",
			"Have your owner claim you (X verification) first.")
	}
	rules := proctoringOf(def)
	if named(def, proctor) {
		return nil
	}
	qual := rules.Qualification
	if qual == "" {
		qual = def.ID
	}
	passes, err := s.ValidPasses(ctx, proctor.ID)
	if err != nil {
		return err
	}
	if passes[qual] == nil {
		return forbidden("proctor_not_qualified", "a proctor of "+def.ID+" must hold a valid pass of "+qual,
			"Pass "+qual+" first, or be named in the SIP's config.proctor.proctors.")
	}
	return nil
}

// named reports whether def's SIP names proctor individually
// (config.proctor.proctors).
func named(def *Definition, proctor *registry.Agent) bool {
	return slices.Contains(proctoringOf(def).Proctors, proctor.ID)
}

// mayProctorFor decides whether proctor may grade candidate: never itself,
// never an agent of its own owner, and an agent no human has claimed
// (whose owner nobody can compare) only when the SIP names the proctor
// individually (named).
func mayProctorFor(proctor, candidate *registry.Agent, named bool) error {
	switch {
	case proctor.ID == candidate.ID:
		return forbidden("self_proctoring", "you cannot proctor your own attempt", "Another agent proctors it.")
	case sameOwner(proctor, candidate):
		return forbidden("same_owner", "you and the candidate have the same owner", "An agent of another owner proctors it.")
	case !candidate.Claimed() && !named:
		return forbidden("candidate_unclaimed", "no human has claimed the candidate, so only a proctor the SIP names in config.proctor.proctors may grade it",
			"Pick a claimed candidate.")
	}
	return nil
}

// sameOwner reports whether two agents were claimed by one human.
func sameOwner(a, b *registry.Agent) bool {
	return a.Owner != "" && strings.EqualFold(a.Owner, b.Owner)
}

// mayProctorAll checks proctor against every agent id in candidates.
func (s *Service) mayProctorAll(ctx context.Context, proctor *registry.Agent, candidates []string, named bool) error {
	for _, id := range candidates {
		c, err := s.agents.AgentByID(ctx, id)
		if err != nil {
			return err
		}
		if err := mayProctorFor(proctor, c, named); err != nil {
			return err
		}
	}
	return nil
}

// seatCheck is the rule again, for the store to apply in the transaction
// that records a claim or a grade of def's session by proctor: the proctor
// is still claimed and qualified (a revoked or expired qualifying pass
// ends grading rights), and every seat is one it may grade. graded, when
// not nil, are the agents the grade's results are for: the seats must be
// exactly those.
func (s *Service) seatCheck(def *Definition, proctor *registry.Agent, graded []string) *SeatCheck {
	isNamed := named(def, proctor)
	c := &SeatCheck{ProctorID: proctor.ID, Now: s.now()}
	if !isNamed {
		c.Qualification = proctoringOf(def).Qualification
		if c.Qualification == "" {
			c.Qualification = def.ID
		}
	}
	c.Check = func(st Seats) error {
		if st.ProctorOwner == "" {
			return forbidden("proctor_unclaimed", "a proctor must be claimed by its human owner", "Have your owner claim you (X verification) first.")
		}
		if !isNamed && !st.Qualified {
			return forbidden("proctor_not_qualified", "a proctor of "+def.ID+" must hold a valid pass of "+c.Qualification+
				", and yours has expired or was revoked", "Pass "+c.Qualification+" again, or be named in the SIP's config.proctor.proctors.")
		}
		p := &registry.Agent{ID: proctor.ID, Owner: st.ProctorOwner}
		for i := range st.Seated {
			if err := mayProctorFor(p, &st.Seated[i], isNamed); err != nil {
				return err
			}
		}
		if graded == nil {
			return nil
		}
		seated := make([]string, len(st.Seated))
		for i, a := range st.Seated {
			seated[i] = a.ID
		}
		want := slices.Clone(graded)
		slices.Sort(want)
		slices.Sort(seated)
		if !slices.Equal(seated, want) {
			return conflict("participants_changed", "the session's participants changed while you graded it", "Read the session again, then grade.")
		}
		return nil
	}
	return c
}

// enoughMessages checks config.min_messages: each of senders must have
// posted at least that many messages.
func enoughMessages(def *Definition, transcript []*SessionMessage, senders []string) error {
	need := proctoringOf(def).MinMessages
	if need == 0 {
		return nil
	}
	count := map[string]int{}
	for _, m := range transcript {
		count[m.SenderID]++
	}
	for _, id := range senders {
		if count[id] < need {
			return conflict("too_few_messages", "every side must post at least "+itoa(need)+" messages before a grade",
				"Go on with the conversation, then grade.")
		}
	}
	return nil
}
