package evaluation

import (
	"context"
	"errors"

	"github.com/sipregistry/sip/registry"
)

// proctoredRunner runs proctored evaluations: a proctor agent claims the
// candidate's attempt, converses with it in a hosted session and grades
// it. The candidate never submits.
type proctoredRunner struct{}

func (proctoredRunner) Handler() string { return "proctor_handler" }

func (proctoredRunner) Runs(s *Service) bool { return s.sessions != nil }

func (proctoredRunner) proctors(*Service, *Definition) bool { return true }

func (proctoredRunner) Start(ctx context.Context, t *Take) (*Started, error) {
	if err := t.open(ctx); err != nil {
		return nil, err
	}
	moved, err := t.s.moveToStarted(ctx, t.Reg)
	if err != nil {
		return nil, err
	}
	out := &Started{Registration: moved, MultiAgent: true}
	sess, err := t.s.sessions.SessionByRegistration(ctx, moved.ID)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		out.Status, out.Instructions = "awaiting_proctor", "A proctor will claim your attempt and open a session; poll GET /api/v1/agents/me/sessions, then talk with the proctor in it."
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

var sessionStarted = conflict("session_started", "the session of this attempt has started; it ends with the proctor's grade", "Wait for the grade.")

func (proctoredRunner) pending(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent) ([]Pending, error) {
	return s.pendingRegistrations(ctx, e, proctor, RegInProgress)
}

func (s *Service) pendingRegistrations(ctx context.Context, e *registry.Entry, proctor *registry.Agent, status RegistrationStatus) ([]Pending, error) {
	regs, err := s.sessions.PendingRegistrations(ctx, e.ID, proctor.ID, status)
	if err != nil {
		return nil, err
	}
	out := make([]Pending, 0, len(regs))
	for _, p := range regs {
		out = append(out, Pending{RegistrationID: p.RegistrationID, CandidateID: p.CandidateID, CandidateName: p.CandidateName, WaitingSince: p.WaitingSince})
	}
	return out, nil
}

func (proctoredRunner) claim(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent, req ClaimRequest) (*Claimed, error) {
	reg, sess, candidate, err := s.claimRegistration(ctx, e, proctor, req, RegInProgress)
	if err != nil {
		return nil, err
	}
	return &Claimed{Session: sess, Registration: reg, Candidate: candidate}, nil
}

func (proctoredRunner) grade(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent, req GradeRequest) (*Graded, error) {
	return s.gradeSession(ctx, e, proctor, req)
}
