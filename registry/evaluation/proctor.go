package evaluation

import (
	"context"
	"errors"
	"time"

	"github.com/sipregistry/sip/registry"
)

// proctoring is a runner whose attempts proctors claim and grade.
type proctoring interface {
	// proctors reports whether proctors work on def's attempts here.
	proctors(s *Service, def *Definition) bool
	pending(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent) ([]Pending, error)
	claim(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent, req ClaimRequest) (*Claimed, error)
	grade(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent, req GradeRequest) (*Graded, error)
}

// Pending is an attempt or a session waiting for a proctor.
type Pending struct {
	RegistrationID string
	SessionID      string
	CandidateID    string
	CandidateName  string
	Participants   int
	WaitingSince   time.Time
	EndsAt         time.Time
}

// ClaimRequest names what a proctor claims: a proctored or benchmark
// attempt by registration, a live session by session.
type ClaimRequest struct {
	RegistrationID string
	SessionID      string
}

// Claimed is a claimed attempt or session.
type Claimed struct {
	Session      *Session
	Registration *Registration // nil for a live session
	Candidate    *registry.Agent
	Answers      []FreeAnswer // a benchmark's free answers to grade
}

// FreeAnswer is a benchmark's free-response question and the candidate's
// answer, shown to the proctor who grades it.
type FreeAnswer struct {
	QuestionID string
	Prompt     string
	Rubric     string
	Points     float64
	Answer     string
}

// GradeRequest is a proctor's grade. Passed (and Score, a percentage)
// grade a session; Scores grade a benchmark's free answers by question.
type GradeRequest struct {
	RegistrationID string
	SessionID      string
	Passed         *bool
	Score          *float64
	Scores         map[string]float64
	Feedback       string
}

// Graded is the results a grade produced.
type Graded struct {
	Session *Session
	Results []*Result
}

// proctoring returns the proctoring of e's handler, if proctors work on it.
func (s *Service) proctoring(e *registry.Entry) proctoring {
	p, ok := s.runner(e.Handler).(proctoring)
	if !ok || !p.proctors(s, current(e)) {
		return nil
	}
	return p
}

// Proctorable reports whether proctors work on e on this server.
func (s *Service) Proctorable(e *registry.Entry) bool { return s.proctoring(e) != nil }

// PendingProctor lists the work on e waiting for a proctor, never the
// caller's own.
func (s *Service) PendingProctor(ctx context.Context, proctorID string, e *registry.Entry) ([]Pending, error) {
	p := s.proctoring(e)
	if p == nil {
		return nil, NotMultiAgent(e)
	}
	proctor, err := s.agents.AgentByID(ctx, proctorID)
	if err != nil {
		return nil, err
	}
	return p.pending(ctx, s, e, proctor)
}

// Claim makes the caller the proctor of an attempt or a session.
func (s *Service) Claim(ctx context.Context, proctorID string, e *registry.Entry, req ClaimRequest) (*Claimed, error) {
	p := s.proctoring(e)
	if p == nil {
		return nil, NotMultiAgent(e)
	}
	proctor, err := s.agents.AgentByID(ctx, proctorID)
	if err != nil {
		return nil, err
	}
	return p.claim(ctx, s, e, proctor, req)
}

// Grade records the claiming proctor's grade.
func (s *Service) Grade(ctx context.Context, proctorID string, e *registry.Entry, req GradeRequest) (*Graded, error) {
	if req.Score != nil && (*req.Score != *req.Score || *req.Score < 0 || *req.Score > 100) {
		return nil, invalid("score", "score must be from 0 to 100", "Leave it out, or send a percentage.")
	}
	if len(req.Feedback) > MaxMessageSize {
		return nil, tooLarge("proctor_feedback", "feedback is at most 16 KiB", "Shorten it.")
	}
	p := s.proctoring(e)
	if p == nil {
		if req.Scores != nil {
			return nil, invalid("scores", "scores grade a benchmark's free answers, and "+e.ID+" has none for a proctor", "Send passed (and score) instead.")
		}
		return nil, NotMultiAgent(e)
	}
	proctor, err := s.agents.AgentByID(ctx, proctorID)
	if err != nil {
		return nil, err
	}
	return p.grade(ctx, s, e, proctor, req)
}

var alreadyClaimed = conflict("already_claimed", "another proctor has claimed it", "Pick another one from pending-proctor.")

// claimRegistration opens the proctored session of a registration waiting
// in status waiting. lasts, when not nil, bounds the session by the
// definition the registration pinned.
func (s *Service) claimRegistration(ctx context.Context, e *registry.Entry, proctor *registry.Agent, req ClaimRequest, waiting RegistrationStatus,
	lasts func(*Definition) time.Duration) (*Registration, *Session, *registry.Agent, error) {
	if req.RegistrationID == "" || req.SessionID != "" {
		return nil, nil, nil, invalid("registration_id", "a proctored attempt is claimed by registration_id", "Send {\"registration_id\": …} from pending-proctor.")
	}
	reg, err := s.attempts.Registration(ctx, req.RegistrationID)
	if errors.Is(err, registry.ErrNotFound) || err == nil && reg.EvaluationID != e.ID {
		return nil, nil, nil, notFound("no such registration", "Pick one from pending-proctor.")
	}
	if err != nil {
		return nil, nil, nil, err
	}
	candidate, err := s.agents.AgentByID(ctx, reg.AgentID)
	if err != nil {
		return nil, nil, nil, err
	}
	def, err := s.defs.pinned(ctx, reg.EvaluationID, reg.VersionID, e)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := mayProctorFor(proctor, candidate, named(def, proctor)); err != nil {
		return nil, nil, nil, err
	}
	if err := s.mayProctor(ctx, def, proctor); err != nil {
		return nil, nil, nil, err
	}
	if reg.Status != waiting {
		if _, err := s.sessions.SessionByRegistration(ctx, reg.ID); err == nil {
			return nil, nil, nil, alreadyClaimed
		}
		return nil, nil, nil, conflict("not_waiting", "this registration is "+string(reg.Status)+", not waiting for a proctor", "Pick one from pending-proctor.")
	}
	now := s.now()
	tmpl := &Session{ID: registry.NewID("ses_"), EvaluationID: e.ID, RegistrationID: reg.ID, VersionID: reg.VersionID, CreatedAt: now}
	if lasts != nil {
		tmpl.EndsAt = now.Add(lasts(def))
	}
	sess, err := s.proctorStore.ClaimRegistration(ctx, tmpl, proctor.ID, reg.AgentID)
	if errors.Is(err, registry.ErrConflict) {
		return nil, nil, nil, alreadyClaimed
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return reg, sess, candidate, nil
}

// claimedSession finds the session a grade names and checks that the
// caller claimed it.
func (s *Service) claimedSession(ctx context.Context, e *registry.Entry, proctor *registry.Agent, req GradeRequest) (*Session, error) {
	var sess *Session
	var err error
	switch {
	case req.SessionID != "":
		sess, err = s.sessions.Session(ctx, req.SessionID)
	case req.RegistrationID != "":
		sess, err = s.sessions.SessionByRegistration(ctx, req.RegistrationID)
	default:
		return nil, invalid("registration_id", "name the attempt: registration_id or session_id", "Send the id you claimed.")
	}
	if errors.Is(err, registry.ErrNotFound) || err == nil && sess.EvaluationID != e.ID {
		return nil, notFound("no claimed session for that id", "Claim it first: POST "+evaluationPath(e)+"/proctor/claim.")
	}
	if err != nil {
		return nil, err
	}
	if sess.ProctorID != proctor.ID {
		return nil, forbidden("not_the_proctor", "only the proctor who claimed this attempt can grade it", "Grade the attempts you claimed.")
	}
	return sess, nil
}

// gradeSession records a proctor's pass/fail grade of a session as the
// result of every graded participant, each under the definition its own
// registration pinned.
func (s *Service) gradeSession(ctx context.Context, e *registry.Entry, proctor *registry.Agent, req GradeRequest) (*Graded, error) {
	if req.Scores != nil {
		return nil, invalid("scores", "scores grade a benchmark's free answers, and "+e.ID+" has none for a proctor", "Send passed (and score) instead.")
	}
	if req.Passed == nil {
		return nil, missing("passed", "Send {\"passed\": true|false, …}.")
	}
	sess, err := s.claimedSession(ctx, e, proctor, req)
	if err != nil {
		return nil, err
	}
	ps, err := s.sessions.Participants(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	transcript, err := s.messages.Messages(ctx, sess.ID, 0, 1<<30)
	if err != nil {
		return nil, err
	}
	senders := []string{proctor.ID}
	for _, p := range ps {
		if p.RegistrationID != "" {
			senders = append(senders, p.AgentID)
		}
	}
	now := s.now()
	var results []*Result
	var graded []string
	var points float64
	var def *Definition
	for _, p := range ps {
		if p.RegistrationID == "" {
			continue // the proctor
		}
		reg, err := s.attempts.Registration(ctx, p.RegistrationID)
		if err != nil {
			return nil, err
		}
		def, err = s.defs.pinned(ctx, reg.EvaluationID, reg.VersionID, e)
		if err != nil {
			return nil, err
		}
		if len(results) == 0 { // a session seats one version: its rules
			if err := enoughMessages(def, transcript, senders); err != nil {
				return nil, err
			}
		}
		started := sess.StartedAt
		if started.IsZero() {
			started = reg.RegisteredAt
		}
		g := grade{passed: *req.Passed, score: req.Score, started: started, deadline: sess.EndsAt,
			inputs:  map[string]any{"transcript": digest(transcript), "messages": itoa(len(transcript))},
			output:  []Check{{Name: "transcript", Passed: true, Message: itoa(len(transcript)) + " messages in the session"}},
			goal:    []Check{{Name: "proctor", Passed: *req.Passed, Message: "graded by proctor " + proctor.ID}},
			details: map[string]any{"session_id": sess.ID, "proctor_agent_id": proctor.ID, "proctor_feedback": req.Feedback}}
		if !g.passed {
			g.reason = "graded by proctor " + proctor.Name
		}
		if !sess.EndsAt.IsZero() && now.After(sess.EndsAt) {
			g.deadline = time.Time{} // graded after the session's end: the work was done in time
		}
		if req.Score != nil {
			max := 100.0
			g.maxScore = &max
		}
		r, pts := s.newResult(def, reg, g, now)
		results, points = append(results, r), pts
		graded = append(graded, p.AgentID)
	}
	if def == nil {
		return nil, conflict("conflict", "this session has no one to grade", "Claim another.")
	}
	// Who may grade whom is checked again in the grade's transaction: a
	// seat taken or a qualification revoked since the claim refuses it.
	saved, err := s.proctorStore.GradeSession(ctx, sess.ID, proctor.ID, results, points, now, s.seatCheck(def, proctor, graded))
	var refused *Refusal
	if errors.As(err, &refused) {
		return nil, refused
	}
	if errors.Is(err, registry.ErrConflict) {
		return nil, conflict("already_graded", "this session has been graded", "A session takes one grade.")
	}
	if err != nil {
		return nil, err
	}
	return &Graded{Session: sess, Results: saved}, nil
}

func itoa(n int) string {
	const digits = "0123456789"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{digits[n%10]}, b...)
	}
	return string(b)
}
