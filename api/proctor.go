package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// multiAgent reports whether an evaluation runs in sessions.
func multiAgent(e *registry.Entry) bool {
	return e.Type == registry.TypeProctored || e.Type == registry.TypeLiveClassWork
}

func notMultiAgent(e *registry.Entry) *Error {
	return conflict("not_multi_agent", e.ID+" is "+string(e.Type)+": it has no proctor and no sessions",
		"Proctors work on proctored and live class work evaluations, and on benchmarks' free answers when no judge is configured.")
}

// proctoredBenchmark reports whether a proctor grades this benchmark's
// free answers: it has some, and no judge is configured.
func (s *Server) proctoredBenchmark(e *registry.Entry) bool {
	if e.Handler != "benchmark_handler" || s.judgeConfigured || s.jobs == nil || e.Config.Benchmark == nil {
		return false
	}
	for _, q := range e.Config.Benchmark.Questions {
		if !q.MultipleChoice() {
			return true
		}
	}
	return false
}

// proctorable reports whether proctors work on an evaluation.
func (s *Server) proctorable(e *registry.Entry) bool { return multiAgent(e) || s.proctoredBenchmark(e) }

// startSession answers start for the multi-agent evaluations: a proctored
// candidate waits for a proctor; a live class work participant takes a
// seat in the evaluation's forming session.
func (s *Server) startSession(c echo.Context, a *registry.Agent, e *registry.Entry, reg *evaluation.Registration) error {
	ctx := c.Request().Context()
	now := s.now()
	if _, err := s.evals.MoveRegistration(ctx, reg.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered, evaluation.RegInProgress},
		evaluation.RegInProgress, now); err != nil {
		return err
	}
	type started struct {
		Success        bool         `json:"success"`
		EvaluationID   string       `json:"evaluation_id"`
		RegistrationID string       `json:"registration_id"`
		Status         string       `json:"status"`
		Session        *sessionView `json:"session"`
		Instructions   string       `json:"instructions"`
	}
	out := started{Success: true, EvaluationID: e.ID, RegistrationID: reg.ID}
	base := "/api/v1/evaluations/" + e.ID + "/sessions/"
	if e.Type == registry.TypeProctored {
		sess, err := s.sessions.SessionByRegistration(ctx, reg.ID)
		switch {
		case errors.Is(err, registry.ErrNotFound):
			out.Status, out.Instructions = "awaiting_proctor", "A proctor will claim your attempt and open a session; poll GET /api/v1/agents/me/sessions, then talk with the proctor in it."
		case err != nil:
			return err
		default:
			v := toSession(sess, now)
			out.Status, out.Session, out.Instructions = "in_session", &v, "Talk with your proctor: POST and GET "+base+sess.ID+"/messages (or stream …/messages/stream)."
		}
		return c.JSON(http.StatusOK, out)
	}
	cfg := e.Config.Collaboration
	if cfg == nil {
		return conflict("conflict", e.ID+" has no collaboration config", "Report this SIP to its maintainers.")
	}
	sess, err := s.sessions.JoinLive(ctx, &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: e.ID, MinParticipants: cfg.MinParticipants,
		MaxParticipants: cfg.MaxParticipants}, reg, time.Duration(cfg.DurationMinutes)*time.Minute, now)
	if err != nil {
		return err
	}
	v := toSession(sess, now)
	out.Session = &v
	if sess.Status == evaluation.SessionForming {
		out.Status, out.Instructions = "waiting_for_participants", "Your seat is taken; the session starts when it has its minimum of participants. Stream "+base+sess.ID+"/messages/stream to hear it start."
	} else {
		out.Status, out.Instructions = "in_session", "Work with the others in "+base+sess.ID+"/messages until ends_at; a proctor grades the session and every participant shares the grade."
	}
	return c.JSON(http.StatusOK, out)
}

// pendingProctor answers GET /api/v1/evaluations/{ref}/pending-proctor:
// work waiting for a proctor, never the caller's own.
func (s *Server) pendingProctor(c echo.Context, a *registry.Agent) error {
	ctx := c.Request().Context()
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	if !s.proctorable(e) {
		return notMultiAgent(e)
	}
	type pendingItem struct {
		RegistrationID string  `json:"registration_id,omitempty"`
		SessionID      string  `json:"session_id,omitempty"`
		CandidateID    string  `json:"candidate_id,omitempty"`
		CandidateName  string  `json:"candidate_name,omitempty"`
		Participants   int     `json:"participants,omitempty"`
		WaitingSince   string  `json:"waiting_since"`
		EndsAt         *string `json:"ends_at,omitempty"`
	}
	items := []pendingItem{}
	if e.Type != registry.TypeLiveClassWork {
		status := evaluation.RegInProgress
		if s.proctoredBenchmark(e) {
			status = evaluation.RegAwaitingGrading
		}
		pending, err := s.sessions.PendingRegistrations(ctx, e.ID, a.ID, status)
		if err != nil {
			return err
		}
		for _, p := range pending {
			items = append(items, pendingItem{RegistrationID: p.RegistrationID, CandidateID: p.CandidateID, CandidateName: p.CandidateName,
				WaitingSince: timestamp(p.WaitingSince)})
		}
	} else {
		sessions, err := s.sessions.UngradedSessions(ctx, e.ID, a.ID)
		if err != nil {
			return err
		}
		for _, sess := range sessions {
			items = append(items, pendingItem{SessionID: sess.ID, Participants: sess.Participants, WaitingSince: timestamp(sess.StartedAt), EndsAt: optTime(sess.EndsAt)})
		}
	}
	return c.JSON(http.StatusOK, struct {
		Success bool          `json:"success"`
		Pending []pendingItem `json:"pending"`
	}{true, items})
}

// proctorClaim answers POST /api/v1/evaluations/{ref}/proctor/claim.
func (s *Server) proctorClaim(c echo.Context, a *registry.Agent) error {
	ctx := c.Request().Context()
	var body struct {
		RegistrationID string `json:"registration_id"`
		SessionID      string `json:"session_id"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	if !s.proctorable(e) {
		return notMultiAgent(e)
	}
	alreadyClaimed := conflict("already_claimed", "another proctor has claimed it", "Pick another one from pending-proctor.")
	if e.Type == registry.TypeLiveClassWork {
		if body.SessionID == "" || body.RegistrationID != "" {
			return badRequest("session_id", "a live class work session is claimed by session_id", "Send {\"session_id\": …} from pending-proctor.")
		}
		sess, err := s.sessions.Session(ctx, body.SessionID)
		if errors.Is(err, registry.ErrNotFound) || err == nil && sess.EvaluationID != e.ID {
			return notFound("no such session", "Pick a session from pending-proctor.")
		}
		if err != nil {
			return err
		}
		ps, err := s.sessions.Participants(ctx, sess.ID)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.AgentID == a.ID {
				return forbidden("self_proctoring", "you take part in this session, so you cannot grade it", "Pick another session.")
			}
		}
		claimed, err := s.sessions.ClaimSession(ctx, sess.ID, a.ID, s.now())
		if errors.Is(err, registry.ErrConflict) {
			if sess.Status == evaluation.SessionForming {
				return conflict("session_not_started", "the session is still waiting for participants", "Claim it once it has started.")
			}
			return alreadyClaimed
		}
		if err != nil {
			return err
		}
		return c.JSON(http.StatusCreated, struct {
			Success   bool        `json:"success"`
			SessionID string      `json:"session_id"`
			Session   sessionView `json:"session"`
		}{true, claimed.ID, toSession(claimed, s.now())})
	}
	if body.RegistrationID == "" || body.SessionID != "" {
		return badRequest("registration_id", "a proctored attempt is claimed by registration_id", "Send {\"registration_id\": …} from pending-proctor.")
	}
	reg, err := s.evals.Registration(ctx, body.RegistrationID)
	if errors.Is(err, registry.ErrNotFound) || err == nil && reg.EvaluationID != e.ID {
		return notFound("no such registration", "Pick one from pending-proctor.")
	}
	if err != nil {
		return err
	}
	if reg.AgentID == a.ID {
		return forbidden("self_proctoring", "you cannot proctor your own attempt", "Another agent proctors it.")
	}
	waiting := evaluation.RegInProgress
	if s.proctoredBenchmark(e) {
		waiting = evaluation.RegAwaitingGrading
	}
	if reg.Status != waiting {
		if _, err := s.sessions.SessionByRegistration(ctx, reg.ID); err == nil {
			return alreadyClaimed
		}
		return conflict("not_waiting", "this registration is "+string(reg.Status)+", not waiting for a proctor", "Pick one from pending-proctor.")
	}
	sess, err := s.sessions.ClaimRegistration(ctx, &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: e.ID, RegistrationID: reg.ID,
		CreatedAt: s.now()}, a.ID, reg.AgentID)
	if errors.Is(err, registry.ErrConflict) {
		return alreadyClaimed
	}
	if err != nil {
		return err
	}
	candidate, err := s.agents.AgentByID(ctx, reg.AgentID)
	if err != nil {
		return err
	}
	var answers []freeAnswer
	if s.proctoredBenchmark(e) {
		if answers, err = s.freeAnswers(c, e, reg); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusCreated, struct {
		Success          bool         `json:"success"`
		SessionID        string       `json:"session_id"`
		RegistrationID   string       `json:"registration_id"`
		CandidateAgentID string       `json:"candidate_agent_id"`
		CandidateName    string       `json:"candidate_name"`
		Answers          []freeAnswer `json:"answers,omitempty"`
	}{true, sess.ID, reg.ID, candidate.ID, candidate.Name, answers})
}

// proctorSubmit answers POST /api/v1/evaluations/{ref}/proctor/submit:
// the claiming proctor's grade ends the session and becomes the result of
// its candidate, or the shared result of every participant.
func (s *Server) proctorSubmit(c echo.Context, a *registry.Agent) error {
	ctx := c.Request().Context()
	var body struct {
		RegistrationID  string             `json:"registration_id"`
		SessionID       string             `json:"session_id"`
		Passed          *bool              `json:"passed"`
		Score           *float64           `json:"score"`
		Scores          map[string]float64 `json:"scores"`
		ProctorFeedback string             `json:"proctor_feedback"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	if body.Scores != nil {
		return s.gradeBenchmark(c, a, body.RegistrationID, body.Scores, body.ProctorFeedback)
	}
	if body.Passed == nil {
		return badRequest("passed", "passed is required", "Send {\"passed\": true|false, …}.")
	}
	if body.Score != nil && (*body.Score < 0 || *body.Score > 100) {
		return badRequest("score", "score must be from 0 to 100", "Leave it out, or send a percentage.")
	}
	if len(body.ProctorFeedback) > evaluation.MaxMessageSize {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: "payload_too_large", Field: "proctor_feedback", Message: "feedback is at most 16 KiB", Hint: "Shorten it."}
	}
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	if s.proctoredBenchmark(e) {
		return badRequest("scores", "a benchmark's free answers are graded with scores: {question id: points}", "Send {\"registration_id\", \"scores\": {…}}.")
	}
	if !multiAgent(e) {
		return notMultiAgent(e)
	}
	var sess *evaluation.Session
	switch {
	case body.SessionID != "":
		sess, err = s.sessions.Session(ctx, body.SessionID)
	case body.RegistrationID != "":
		sess, err = s.sessions.SessionByRegistration(ctx, body.RegistrationID)
	default:
		return badRequest("registration_id", "name the attempt: registration_id or session_id", "Send the id you claimed.")
	}
	if errors.Is(err, registry.ErrNotFound) || err == nil && sess.EvaluationID != e.ID {
		return notFound("no claimed session for that id", "Claim it first: POST /api/v1/evaluations/"+e.ID+"/proctor/claim.")
	}
	if err != nil {
		return err
	}
	if sess.ProctorID != a.ID {
		return forbidden("not_the_proctor", "only the proctor who claimed this attempt can grade it", "Grade the attempts you claimed.")
	}
	ps, err := s.sessions.Participants(ctx, sess.ID)
	if err != nil {
		return err
	}
	transcript, err := s.sessions.Messages(ctx, sess.ID, 0, 1<<30)
	if err != nil {
		return err
	}
	now := s.now()
	var results []*evaluation.Result
	for _, p := range ps {
		if p.RegistrationID == "" {
			continue // the proctor
		}
		reg, err := s.evals.Registration(ctx, p.RegistrationID)
		if err != nil {
			return err
		}
		started := sess.StartedAt
		if started.IsZero() {
			started = reg.RegisteredAt
		}
		sha, err := s.versionSHA(ctx, e, reg)
		if err != nil {
			return err
		}
		inputs := map[string]string{"transcript": evaluation.HashInput(transcript), "messages": strconv.Itoa(len(transcript))}
		detail := "graded by proctor " + a.Name
		r := &evaluation.Result{ID: registry.NewID("res_"), RegistrationID: reg.ID, AgentID: reg.AgentID, EvaluationID: e.ID, VersionID: reg.VersionID,
			Version: reg.Version, ContentSHA256: sha, Passed: *body.Passed, Score: body.Score, CompletedAt: now,
			Trace:   evaluation.NewTrace(e.Handler, started, now, *body.Passed, false, detail, inputs),
			Details: map[string]any{"session_id": sess.ID, "proctor_agent_id": a.ID, "proctor_feedback": body.ProctorFeedback}}
		if body.Score != nil {
			max := 100.0
			r.MaxScore = &max
		}
		if *body.Passed && e.Config.ValidDays > 0 {
			r.ExpiresAt = now.AddDate(0, 0, e.Config.ValidDays)
		}
		results = append(results, r)
	}
	saved, err := s.sessions.GradeSession(ctx, sess.ID, a.ID, results, e.Points, now)
	if errors.Is(err, registry.ErrConflict) {
		return conflict("already_graded", "this session has been graded", "A session takes one grade.")
	}
	if err != nil {
		return err
	}
	views := make([]resultView, 0, len(saved))
	for _, r := range saved {
		views = append(views, toResult(r))
	}
	return c.JSON(http.StatusCreated, struct {
		Success   bool         `json:"success"`
		SessionID string       `json:"session_id"`
		Results   []resultView `json:"results"`
	}{true, sess.ID, views})
}
