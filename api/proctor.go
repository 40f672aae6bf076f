package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// proctorable reports whether proctors work on an evaluation here.
func (s *Server) proctorable(e *registry.Entry) bool {
	return s.serves.Results && s.runtime.Proctorable(e)
}

// pendingProctor answers GET /api/v1/evaluations/{ref}/pending-proctor:
// work waiting for a proctor, never the caller's own.
func (s *Server) pendingProctor(c echo.Context, a *registry.Agent) error {
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	pending, err := s.runtime.PendingProctor(c.Request().Context(), a.ID, e)
	if err != nil {
		return err
	}
	type pendingItem struct {
		RegistrationID   string  `json:"registration_id,omitempty"`
		SessionID        string  `json:"session_id,omitempty"`
		CandidateAgentID string  `json:"candidate_agent_id,omitempty"`
		CandidateID      string  `json:"candidate_id,omitempty"` // deprecated: candidate_agent_id
		CandidateName    string  `json:"candidate_name,omitempty"`
		ParticipantCount int     `json:"participant_count,omitempty"`
		Participants     int     `json:"participants,omitempty"` // deprecated: participant_count
		WaitingSince     string  `json:"waiting_since"`
		EndsAt           *string `json:"ends_at,omitempty"`
	}
	items := make([]pendingItem, 0, len(pending))
	for _, p := range pending {
		items = append(items, pendingItem{p.RegistrationID, p.SessionID, p.CandidateID, p.CandidateID, p.CandidateName, p.Participants, p.Participants,
			timestamp(p.WaitingSince), optTime(p.EndsAt)})
	}
	return c.JSON(http.StatusOK, struct {
		Success bool          `json:"success"`
		Pending []pendingItem `json:"pending"`
	}{true, items})
}

type freeAnswerView struct {
	QuestionID string  `json:"question_id"`
	Prompt     string  `json:"prompt"`
	Rubric     string  `json:"rubric,omitempty"`
	Points     float64 `json:"points"`
	Answer     string  `json:"answer"`
}

// proctorClaim answers POST /api/v1/evaluations/{ref}/proctor/claim.
func (s *Server) proctorClaim(c echo.Context, a *registry.Agent) error {
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
	cl, err := s.runtime.Claim(c.Request().Context(), a.ID, e, evaluation.ClaimRequest{RegistrationID: body.RegistrationID, SessionID: body.SessionID})
	if err != nil {
		return err
	}
	if cl.Registration == nil {
		return c.JSON(http.StatusCreated, struct {
			Success   bool        `json:"success"`
			SessionID string      `json:"session_id"`
			Session   sessionView `json:"session"`
		}{true, cl.Session.ID, toSession(cl.Session, s.now())})
	}
	var answers []freeAnswerView
	for _, f := range cl.Answers {
		answers = append(answers, freeAnswerView{f.QuestionID, f.Prompt, f.Rubric, f.Points, f.Answer})
	}
	return c.JSON(http.StatusCreated, struct {
		Success          bool             `json:"success"`
		SessionID        string           `json:"session_id"`
		RegistrationID   string           `json:"registration_id"`
		CandidateAgentID string           `json:"candidate_agent_id"`
		CandidateName    string           `json:"candidate_name"`
		Answers          []freeAnswerView `json:"answers,omitempty"`
	}{true, cl.Session.ID, cl.Registration.ID, cl.Candidate.ID, cl.Candidate.Name, answers})
}

// proctorSubmit answers POST /api/v1/evaluations/{ref}/proctor/submit:
// the claiming proctor's grade ends the session and becomes the result of
// its candidate, or the shared result of every participant.
func (s *Server) proctorSubmit(c echo.Context, a *registry.Agent) error {
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
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	g, err := s.runtime.Grade(c.Request().Context(), a.ID, e, evaluation.GradeRequest{RegistrationID: body.RegistrationID, SessionID: body.SessionID,
		Passed: body.Passed, Score: body.Score, Scores: body.Scores, Feedback: body.ProctorFeedback})
	if err != nil {
		return err
	}
	views := make([]resultView, 0, len(g.Results))
	for _, r := range g.Results {
		views = append(views, toResult(r))
	}
	return c.JSON(http.StatusCreated, struct {
		Success   bool         `json:"success"`
		SessionID string       `json:"session_id"`
		Results   []resultView `json:"results"`
	}{true, g.Session.ID, views})
}
