package evaluation

import (
	"context"
	"errors"
	"time"

	"github.com/sipregistry/sip/registry"
)

// proctoredRunner runs proctored evaluations: a proctor agent claims the
// candidate's attempt, converses with it in a hosted session and grades
// it. The candidate never submits.
type proctoredRunner struct{}

func (proctoredRunner) Handler() string { return "proctor_handler" }

func (proctoredRunner) Runs(s *Service) bool { return s.keepsSessions() }

func (proctoredRunner) proctors(*Service, *Definition) bool { return true }

func (proctoredRunner) Start(ctx context.Context, t *Take) (*Started, error) {
	if err := t.open(ctx); err != nil {
		return nil, err
	}
	// The first start sets the time by which a proctor must claim it.
	moved, err := t.s.moveToStarted(ctx, t.Reg, t.s.now().Add(claimWithin(t.Def)))
	if err != nil {
		return nil, err
	}
	out := &Started{Registration: moved, MultiAgent: true}
	sess, err := t.s.sessions.SessionByRegistration(ctx, moved.ID)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		out.ExpiresAt = moved.Deadline
		out.Status, out.Instructions = "awaiting_proctor", "A proctor will claim your attempt and open a session by "+moved.Deadline.UTC().Format(time.RFC3339)+
			"; poll GET /api/v1/agents/me/sessions, then talk with the proctor in it. Unclaimed by then, the attempt ends not_graded and does not count."
	case err != nil:
		return nil, err
	default:
		out.Status, out.Session = "in_session", sess
		out.Instructions = "Talk with your proctor: POST and GET " + evaluationPath(t.Entry) + "/sessions/" + sess.ID + "/messages (or stream …/messages/stream)."
	}
	return out, nil
}

func (proctoredRunner) Submit(ctx context.Context, t *Take, _ func(any) error) (*Submitted, error) {
	if err := t.open(ctx); err != nil {
		return nil, submitRefusal(t.Entry, err)
	}
	return nil, conflict("proctored_evaluation", "a proctored evaluation is graded by its proctor, not submitted by its candidate", "Wait for a proctor.")
}

// cancel refuses once a proctor has opened the attempt's session.
func (proctoredRunner) cancel(ctx context.Context, t *Take) error {
	_, err := t.s.sessions.SessionByRegistration(ctx, t.Reg.ID)
	if err == nil {
		return sessionStarted
	}
	if errors.Is(err, registry.ErrNotFound) {
		return nil
	}
	return err
}

// claimWithin is how long a started attempt at def waits for a claim.
func claimWithin(def *Definition) time.Duration {
	minutes := registry.DefaultClaimWithinMinutes
	if def.Config.Proctor != nil && def.Config.Proctor.ClaimWithinMinutes > 0 {
		minutes = def.Config.Proctor.ClaimWithinMinutes
	}
	return time.Duration(minutes) * time.Minute
}

// proctoredSessionLength is how long a proctored session of def lasts
// from its claim.
func proctoredSessionLength(def *Definition) time.Duration {
	minutes := registry.DefaultProctorMinutes
	if def.Config.Proctor != nil {
		minutes = def.Config.Proctor.DurationMinutes
	}
	return time.Duration(minutes) * time.Minute
}

var sessionStarted = conflict("session_started", "the session of this attempt has started; it ends with the proctor's grade", "Wait for the grade.")

func (proctoredRunner) pending(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent) ([]Pending, error) {
	return s.pendingRegistrations(ctx, e, proctor, RegInProgress)
}

// pendingRegistrations lists the attempts waiting in status that the
// caller may claim: none when it may not proctor e, and never those of
// its own owner's agents. A candidate who keeps results private is listed
// without its name.
func (s *Service) pendingRegistrations(ctx context.Context, e *registry.Entry, proctor *registry.Agent, status RegistrationStatus) ([]Pending, error) {
	out := []Pending{}
	if err := s.mayProctor(ctx, current(e), proctor); isRefusal(err) {
		return out, nil
	} else if err != nil {
		return nil, err
	}
	regs, err := s.proctorStore.PendingRegistrations(ctx, e.ID, proctor.ID, status)
	if err != nil {
		return nil, err
	}
	for _, p := range regs {
		c, err := s.agents.AgentByID(ctx, p.CandidateID)
		if err != nil {
			return nil, err
		}
		if mayProctorFor(proctor, c, named(current(e), proctor)) != nil {
			continue
		}
		name := p.CandidateName
		if !registry.CanSee(proctor.ID, c, registry.SeeName) {
			name = PrivateName
		}
		out = append(out, Pending{RegistrationID: p.RegistrationID, CandidateID: p.CandidateID, CandidateName: name, WaitingSince: p.WaitingSince})
	}
	return out, nil
}

// PrivateName stands for an agent that keeps its results private.
const PrivateName = "a private agent"

func (proctoredRunner) claim(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent, req ClaimRequest) (*Claimed, error) {
	reg, sess, candidate, err := s.claimRegistration(ctx, e, proctor, req, RegInProgress, proctoredSessionLength)
	if err != nil {
		return nil, err
	}
	return &Claimed{Session: sess, Registration: reg, Candidate: candidate}, nil
}

func (proctoredRunner) grade(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent, req GradeRequest) (*Graded, error) {
	return s.gradeSession(ctx, e, proctor, req)
}
