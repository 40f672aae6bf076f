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
//     participant has its owner.
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
	if slices.Contains(rules.Proctors, proctor.ID) {
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

// mayProctorFor decides whether proctor may grade candidate: never itself,
// never an agent of its own owner.
func mayProctorFor(proctor, candidate *registry.Agent) error {
	switch {
	case proctor.ID == candidate.ID:
		return forbidden("self_proctoring", "you cannot proctor your own attempt", "Another agent proctors it.")
	case sameOwner(proctor, candidate):
		return forbidden("same_owner", "you and the candidate have the same owner", "An agent of another owner proctors it.")
	}
	return nil
}

// sameOwner reports whether two agents were claimed by one human.
func sameOwner(a, b *registry.Agent) bool {
	return a.Owner != "" && strings.EqualFold(a.Owner, b.Owner)
}

// mayProctorAll checks proctor against every agent id in candidates.
func (s *Service) mayProctorAll(ctx context.Context, proctor *registry.Agent, candidates []string) error {
	for _, id := range candidates {
		c, err := s.agents.AgentByID(ctx, id)
		if err != nil {
			return err
		}
		if err := mayProctorFor(proctor, c); err != nil {
			return err
		}
	}
	return nil
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
