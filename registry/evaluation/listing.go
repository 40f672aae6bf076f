package evaluation

import (
	"context"
	"errors"

	"github.com/sipregistry/sip/registry"
)

// Who may open a registration, decided here once: Register refuses with
// these checks, and the listing shows their outcome (can_register and the
// refusal), so the two cannot disagree. In order:
//
//   - the evaluation is active and not removed;
//   - this server runs its handler;
//   - a benchmark's sealed answers open with this registry's sealing key
//     (else no attempt could be graded here);
//   - an evaluation that takes only claimed agents
//     (registry.SIP.RequiresClaimed): the agent is claimed;
//   - every prerequisite is met: a valid pass of each evaluation, a
//     recorded credential that verifies now of each credential
//     prerequisite;
//   - attempts are left (config.max_attempts, config.retry_after_hours).

// Eligibility is where an agent stands with one evaluation, as listings
// show it.
type Eligibility struct {
	// Status is available, prerequisites_not_met, completed (a valid pass
	// is held), or the open registration's status.
	Status string
	// CanRegister says whether Register would open a new registration now.
	CanRegister bool
	// Refusal is why not, as Register refuses, when a rule refuses (nil
	// when the agent has an open registration: Register returns it).
	Refusal *Refusal
	// Open is the agent's open registration, if any.
	Open *Registration
	// HasPassed says the agent holds a pass of it that has not expired.
	HasPassed bool
}

// candidate is an agent about to register, with what the rules read of it
// read once, when a rule first needs it.
type candidate struct {
	s       *Service
	agentID string
	agent   *registry.Agent
	valid   map[string]*Result
}

func (c *candidate) passes(ctx context.Context) (map[string]*Result, error) {
	if c.valid == nil {
		v, err := c.s.ValidPasses(ctx, c.agentID)
		if err != nil {
			return nil, err
		}
		c.valid = v
	}
	return c.valid, nil
}

func (c *candidate) read(ctx context.Context) (*registry.Agent, error) {
	if c.agent == nil {
		a, err := c.s.agents.AgentByID(ctx, c.agentID)
		if err != nil {
			return nil, err
		}
		c.agent = a
	}
	return c.agent, nil
}

// mayRegister is the rule: nil when the candidate may open a registration
// for e now, else the refusal (or a failure to read what it needs).
func (s *Service) mayRegister(ctx context.Context, c *candidate, e *registry.Entry) error {
	if r := s.takesRegistrations(e); r != nil {
		return r
	}
	if e.RequiresClaimed() {
		a, err := c.read(ctx)
		if err != nil {
			return err
		}
		if err := mustBeClaimed(&e.SIP, a); err != nil {
			return err
		}
	}
	if len(e.Prerequisites)+len(e.CredentialPrerequisites) > 0 {
		valid, err := c.passes(ctx)
		if err != nil {
			return err
		}
		missing := MissingPrerequisites(e.Prerequisites, valid)
		held, why, err := s.heldCredentials(ctx, c.agentID, e.CredentialPrerequisites)
		if err != nil {
			return err
		}
		missing = append(missing, MissingCredentials(e.CredentialPrerequisites, held)...)
		if len(missing) > 0 {
			hint := "Pass every prerequisite (a pass that has not expired), then register."
			if len(e.CredentialPrerequisites) > 0 {
				hint += " A credential prerequisite is met by presenting that credential: POST /api/v1/agents/me/credentials."
			}
			for _, w := range why {
				hint += " Note: " + w + "."
			}
			r := refuse(registry.ErrForbidden, "prerequisites_not_met", "prerequisites not met: pass "+joinIDs(missing)+" first", hint)
			r.Missing = missing
			return r
		}
	}
	return s.attemptsLeft(ctx, c, e)
}

// takesRegistrations is the part of the rule that is the evaluation's
// alone: it is active, not removed, this server runs its handler, and it
// can grade it (a benchmark's sealed answers open with its key).
func (s *Service) takesRegistrations(e *registry.Entry) *Refusal {
	if e.Status != registry.StatusActive || e.Removed {
		return conflict("evaluation_not_active", e.ID+" is "+string(e.Status)+"; only active evaluations take registrations", "Choose an active evaluation.")
	}
	if !s.Runnable(e.Handler) {
		return conflict("conflict", e.ID+" ("+string(e.Type)+") cannot be taken on this server yet: it does not run "+e.Handler,
			"Take an evaluation whose can_register is true.")
	}
	if e.Config.Benchmark != nil {
		var r *Refusal // answerKey fails only with a refusal
		if _, err := s.answerKey(current(e)); errors.As(err, &r) {
			// Not the 503 of an attempt already under way: nothing is
			// wrong with the request, and asking again will not help
			// until the operators serve the key the answers were sealed
			// to.
			return conflict("evaluation_unavailable", r.Message, r.Hint)
		}
	}
	return nil
}

// Unavailable is why e takes no registrations on this server, whoever
// asks (nil when it takes them): the listing's can_register and reason
// for anyone, as Register would refuse.
func (s *Service) Unavailable(e *registry.Entry) *Refusal { return s.takesRegistrations(e) }

// mustBeClaimed refuses an unclaimed agent an evaluation that takes only
// claimed ones (registry.SIP.RequiresClaimed): live class work and
// proctored evaluations, unless their SIP sets config.allow_unclaimed,
// because a proctor's independence is checked by comparing owners; and
// evaluations that award points for fixed answers, unless their SIP sets
// config.require_claimed: false, because attempt limits counted per owner
// bound nothing for agents that have none.
func mustBeClaimed(s *registry.SIP, a *registry.Agent) error {
	if !s.RequiresClaimed() || a.Claimed() {
		return nil
	}
	switch {
	case s.Config.Proctor != nil:
		return forbidden("claim_required", s.ID+" takes only candidates claimed by a human owner, so that a proctor of the same owner never grades them",
			"Have your owner claim you (X verification) first.")
	case s.Config.Collaboration != nil:
		return forbidden("claim_required", s.ID+" seats only agents claimed by a human owner, one agent per owner in a session",
			"Have your owner claim you (X verification) first.")
	}
	return forbidden("claim_required", s.ID+" awards points for fixed answers and takes only agents claimed by a human owner, whose attempts count together",
		"Have your owner claim you (X verification) first.")
}

// Eligibilities is where the agent stands with each of entries, in their
// order: the listing's status, can_register and the refusal, decided by
// the rule Register applies.
func (s *Service) Eligibilities(ctx context.Context, agentID string, entries []*registry.Entry) ([]Eligibility, error) {
	open := map[string]*Registration{}
	regs, err := s.attempts.OpenRegistrations(ctx, agentID)
	if err != nil {
		return nil, err
	}
	for _, r := range regs {
		open[r.EvaluationID] = r
	}
	c := &candidate{s: s, agentID: agentID}
	valid, err := c.passes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Eligibility, 0, len(entries))
	for _, e := range entries {
		el := Eligibility{Status: "available", HasPassed: valid[e.ID] != nil, Open: open[e.ID]}
		switch {
		case el.Open != nil:
			el.Status = string(el.Open.Status)
		case el.HasPassed:
			el.Status = "completed"
		}
		if el.Open == nil {
			err := s.mayRegister(ctx, c, e)
			if err != nil && !isRefusal(err) {
				return nil, err
			}
			el.CanRegister = err == nil
			var r *Refusal
			if errors.As(err, &r) {
				el.Refusal = r
				if r.Code == "prerequisites_not_met" && !el.HasPassed {
					el.Status = "prerequisites_not_met"
				}
			}
		}
		out = append(out, el)
	}
	return out, nil
}
