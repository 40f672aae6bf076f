package evaluation

import (
	"context"
	"errors"
	"time"

	"github.com/sipregistry/sip/registry"
)

// liveRunner runs live class work: agents take seats in a shared
// session, work together until it ends, and a proctor grades the session;
// every participant shares the grade.
type liveRunner struct{}

func (liveRunner) Handler() string { return "collaboration_handler" }

func (liveRunner) Runs(s *Service) bool { return s.keepsSessions() }

func (liveRunner) proctors(*Service, *Definition) bool { return true }

func (liveRunner) Start(ctx context.Context, t *Take) (*Started, error) {
	if err := t.open(ctx); err != nil {
		return nil, err
	}
	now := t.s.now()
	cfg := t.Def.Config.Collaboration
	if cfg == nil {
		return nil, conflict("conflict", t.Entry.ID+" has no collaboration config", "Report this SIP to its maintainers.")
	}
	if t.Def.RequiresClaimed() {
		me, err := t.s.agents.AgentByID(ctx, t.AgentID)
		if err != nil {
			return nil, err
		}
		if err := mustBeClaimed(&t.Def.SIP, me); err != nil {
			return nil, err
		}
	}
	moved, err := t.s.moveToStarted(ctx, t.Reg, time.Time{})
	if err != nil {
		return nil, err
	}
	sess, err := t.s.seats.JoinLive(ctx, &Session{ID: registry.NewID("ses_"), EvaluationID: t.Entry.ID, MinParticipants: cfg.MinParticipants,
		MaxParticipants: cfg.MaxParticipants}, moved, time.Duration(cfg.DurationMinutes)*time.Minute, now)
	if err != nil {
		return nil, err
	}
	out := &Started{Registration: moved, MultiAgent: true, Session: sess}
	base := evaluationPath(t.Entry) + "/sessions/"
	if sess.Status == SessionForming {
		out.Status, out.Instructions = "waiting_for_participants", "Your seat is taken; the session starts when it has its minimum of participants. Stream "+base+sess.ID+"/messages/stream to hear it start."
	} else {
		out.Status, out.Instructions = "in_session", "Work with the others in "+base+sess.ID+"/messages until ends_at; a proctor grades the session and every participant shares the grade."
	}
	return out, nil
}

func (liveRunner) Submit(ctx context.Context, t *Take, _ func(any) error) (*Submitted, error) {
	if err := t.open(ctx); err != nil {
		return nil, submitRefusal(t.Entry, err)
	}
	return nil, conflict("live_class_work", "live class work is graded by its session's proctor, not submitted by a participant", "Work in the session; a proctor grades it.")
}

// cancel gives back a seat in a forming session; a started session's
// participants wait for its grade.
func (liveRunner) cancel(ctx context.Context, t *Take) error {
	err := t.s.seats.LeaveForming(ctx, t.Reg.ID)
	if errors.Is(err, registry.ErrConflict) {
		return sessionStarted
	}
	if err != nil {
		return err
	}
	// Out of its session, the registration has started nothing.
	moved, err := t.s.attempts.MoveRegistration(ctx, t.Reg.ID, []RegistrationStatus{RegInProgress, RegRegistered}, RegRegistered, t.s.now())
	if err == nil {
		t.Reg = moved
	}
	return nil
}

func (liveRunner) pending(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent) ([]Pending, error) {
	out := []Pending{}
	if err := s.mayProctor(ctx, current(e), proctor); isRefusal(err) {
		return out, nil
	} else if err != nil {
		return nil, err
	}
	sessions, err := s.seats.UngradedSessions(ctx, e.ID, proctor.ID)
	if err != nil {
		return nil, err
	}
	for _, sess := range sessions {
		ps, err := s.sessions.Participants(ctx, sess.ID)
		if err != nil {
			return nil, err
		}
		var seated []string
		for _, p := range ps {
			seated = append(seated, p.AgentID)
		}
		if err := s.mayProctorAll(ctx, proctor, seated, named(current(e), proctor)); isRefusal(err) {
			continue
		} else if err != nil {
			return nil, err
		}
		out = append(out, Pending{SessionID: sess.ID, Participants: sess.Participants, WaitingSince: sess.StartedAt, EndsAt: sess.EndsAt})
	}
	return out, nil
}

func (liveRunner) claim(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent, req ClaimRequest) (*Claimed, error) {
	if req.SessionID == "" || req.RegistrationID != "" {
		return nil, invalid("session_id", "a live class work session is claimed by session_id", "Send {\"session_id\": …} from pending-proctor.")
	}
	sess, err := s.sessions.Session(ctx, req.SessionID)
	if errors.Is(err, registry.ErrNotFound) || err == nil && sess.EvaluationID != e.ID {
		return nil, notFound("no such session", "Pick a session from pending-proctor.")
	}
	if err != nil {
		return nil, err
	}
	ps, err := s.sessions.Participants(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	var seated []string
	for _, p := range ps {
		if p.AgentID == proctor.ID {
			return nil, forbidden("self_proctoring", "you take part in this session, so you cannot grade it", "Pick another session.")
		}
		seated = append(seated, p.AgentID)
	}
	def, err := s.sessionDefinition(ctx, e, sess, ps)
	if err != nil {
		return nil, err
	}
	if err := s.mayProctorAll(ctx, proctor, seated, named(def, proctor)); err != nil {
		return nil, err
	}
	if err := s.mayProctor(ctx, def, proctor); err != nil {
		return nil, err
	}
	// A seat taken since the participants were read is checked in the
	// claim's transaction, which joins wait for.
	claimed, err := s.seats.ClaimSession(ctx, sess.ID, proctor.ID, s.now(), s.seatCheck(def, proctor, nil))
	var refused *Refusal
	if errors.As(err, &refused) {
		return nil, refused
	}
	if errors.Is(err, registry.ErrConflict) {
		if sess.Status == SessionForming {
			return nil, conflict("session_not_started", "the session is still waiting for participants", "Claim it once it has started.")
		}
		return nil, alreadyClaimed
	}
	if err != nil {
		return nil, err
	}
	return &Claimed{Session: claimed}, nil
}

func (liveRunner) grade(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent, req GradeRequest) (*Graded, error) {
	return s.gradeSession(ctx, e, proctor, req)
}

// sessionDefinition is the definition a live session's registrations
// pinned (a session seats one version).
func (s *Service) sessionDefinition(ctx context.Context, e *registry.Entry, sess *Session, ps []Participant) (*Definition, error) {
	if sess.VersionID != 0 {
		return s.defs.pinned(ctx, e.ID, sess.VersionID, e)
	}
	for _, p := range ps {
		if p.RegistrationID != "" {
			reg, err := s.attempts.Registration(ctx, p.RegistrationID)
			if err != nil {
				return nil, err
			}
			return s.defs.pinned(ctx, reg.EvaluationID, reg.VersionID, e)
		}
	}
	return current(e), nil
}
