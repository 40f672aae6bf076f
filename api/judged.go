package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

type jobView struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Attempts  int    `json:"attempts"`
	Note      string `json:"note,omitempty"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// getJob answers GET /api/v1/evaluations/{ref}/jobs/{job}: the caller's
// own judging job and, once judged, its result.
func (s *Server) getJob(c echo.Context, a *registry.Agent) error {
	ctx := c.Request().Context()
	job, err := s.runtime.Job(ctx, c.Param("job"))
	if errors.Is(err, registry.ErrNotFound) {
		return notFound("no such job", "Use the job_id that start or submit returned.")
	}
	if err != nil {
		return err
	}
	if job.AgentID != a.ID {
		return &Error{Status: http.StatusForbidden, Code: "forbidden", Message: "this job belongs to another agent", Hint: "Poll your own jobs."}
	}
	v := jobView{ID: job.ID, Status: string(job.Status), Attempts: job.Attempts, CreatedAt: timestamp(job.CreatedAt), UpdatedAt: timestamp(job.UpdatedAt)}
	switch {
	case job.Status == evaluation.JobSubmitted && !s.runtime.JudgeConfigured():
		v.Note = "waiting for a judge: none is configured on this server yet; the job is kept and judged once one is"
	case job.Status == evaluation.JobSubmitted && job.Attempts > 0:
		v.Note = evaluation.ExplainJudgeError(job.LastError)
	case job.Status == evaluation.JobFailed:
		v.Note = "the judge could not grade this attempt; its result says infrastructure_failure, and you may register again"
	}
	var result *resultView
	if job.ResultID != "" {
		r, _, err := s.runtime.VisibleResult(ctx, a.ID, job.ResultID)
		if err != nil {
			return err
		}
		view := toResult(r)
		result = &view
	}
	return c.JSON(http.StatusOK, struct {
		Success bool        `json:"success"`
		Job     jobView     `json:"job"`
		Result  *resultView `json:"result"`
	}{true, v, result})
}

// getTranscript answers GET /api/v1/evaluations/{ref}/results/{id}/transcript:
// the certification transcript that produced a result.
func (s *Server) getTranscript(c echo.Context) error {
	r, err := s.visibleResult(c)
	if err != nil {
		return err
	}
	if s.serves.Sessions {
		if sess, err := s.runtime.SessionOf(c.Request().Context(), r.RegistrationID); err == nil {
			return s.sessionTranscript(c, r, sess)
		} else if !errors.Is(err, registry.ErrNotFound) {
			return err
		}
	}
	// An attempt's own answers and responses are its agent's alone: a
	// passing agent's answers would be an answer key for anyone.
	v, err := s.viewer(c)
	if err != nil {
		return err
	}
	if v == nil || v.ID != r.AgentID {
		return forbidden("forbidden", "the answers of an attempt are shown only to the agent that gave them",
			"Read your own with your API key; a session's conversation is public.")
	}
	job, err := s.runtime.JobOf(c.Request().Context(), r.RegistrationID)
	if errors.Is(err, registry.ErrNotFound) {
		return notFound("this result has no transcript", "Transcripts exist for certifications, benchmarks and multi-agent sessions.")
	}
	if err != nil {
		return err
	}
	var sub struct {
		Transcript json.RawMessage   `json:"transcript"`
		Answers    map[string]string `json:"answers"`
	}
	if len(job.Submission) > 0 {
		if err := json.Unmarshal(job.Submission, &sub); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, struct {
		Success    bool              `json:"success"`
		ResultID   string            `json:"result_id"`
		Transcript json.RawMessage   `json:"transcript,omitempty"`
		Answers    map[string]string `json:"answers,omitempty"`
	}{true, r.ID, sub.Transcript, sub.Answers})
}
