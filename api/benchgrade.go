package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/judge"
)

// freeAnswer is a benchmark's free-response question and the candidate's
// answer, shown to the proctor who grades it.
type freeAnswer struct {
	QuestionID string  `json:"question_id"`
	Prompt     string  `json:"prompt"`
	Rubric     string  `json:"rubric,omitempty"`
	Points     float64 `json:"points"`
	Answer     string  `json:"answer"`
}

// freeAnswers reads a benchmark attempt's free answers from its job.
func (s *Server) freeAnswers(c echo.Context, e *registry.Entry, reg *evaluation.Registration) ([]freeAnswer, error) {
	job, err := s.jobs.JobByRegistration(c.Request().Context(), reg.ID)
	if err != nil {
		return nil, err
	}
	var sub judge.BenchmarkSubmission
	if err := json.Unmarshal(job.Submission, &sub); err != nil {
		return nil, err
	}
	out := []freeAnswer{}
	for _, q := range e.Config.Benchmark.Questions {
		if !q.MultipleChoice() {
			out = append(out, freeAnswer{QuestionID: q.ID, Prompt: q.Prompt, Rubric: q.Rubric, Points: q.Points, Answer: sub.Answers[q.ID]})
		}
	}
	return out, nil
}

// gradeBenchmark records a proctor's grades of a benchmark's free answers
// (when no judge is configured): the server adds the points it graded
// itself, clamps each grade to its question's points, computes the total
// and whether it passes, and completes the job.
func (s *Server) gradeBenchmark(c echo.Context, a *registry.Agent, registrationID string, scores map[string]float64, feedback string) error {
	ctx := c.Request().Context()
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	if !s.proctoredBenchmark(e) {
		return badRequest("scores", "scores grade a benchmark's free answers, and "+e.ID+" has none for a proctor", "Send passed (and score) instead.")
	}
	if registrationID == "" {
		return badRequest("registration_id", "registration_id is required", "Send the registration you claimed.")
	}
	sess, err := s.sessions.SessionByRegistration(ctx, registrationID)
	if errors.Is(err, registry.ErrNotFound) || err == nil && sess.EvaluationID != e.ID {
		return notFound("no claimed session for that registration", "Claim it first: POST /api/v1/evaluations/"+e.ID+"/proctor/claim.")
	}
	if err != nil {
		return err
	}
	if sess.ProctorID != a.ID {
		return forbidden("not_the_proctor", "only the proctor who claimed this attempt can grade it", "Grade the attempts you claimed.")
	}
	cfg := e.Config.Benchmark
	free := map[string]float64{}
	for _, q := range cfg.Questions {
		if !q.MultipleChoice() {
			free[q.ID] = q.Points
		}
	}
	verdict := &judge.Verdict{}
	ids := make([]string, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		max, ok := free[id]
		if !ok {
			return badRequest("scores", "no free-response question "+quote(id), "Grade the questions the claim listed, by question_id.")
		}
		if v := scores[id]; v != v || v < 0 || v > max {
			return badRequest("scores", fmt.Sprintf("the grade of %s must be from 0 to %g", id, max), "Grade each answer within its question's points.")
		}
		verdict.Scores = append(verdict.Scores, judge.Score{PromptID: id, Score: scores[id]})
	}
	if len(scores) != len(free) {
		return badRequest("scores", "grade every free-response question once", "Send a grade for each question the claim listed.")
	}
	reg, err := s.evals.Registration(ctx, registrationID)
	if err != nil {
		return err
	}
	job, err := s.jobs.JobByRegistration(ctx, reg.ID)
	if err != nil {
		return err
	}
	var partial judge.BenchmarkPartial
	if err := json.Unmarshal(job.Partial, &partial); err != nil {
		return err
	}
	score := partial.ChoicePoints + judge.BenchmarkFreeScore(cfg, verdict)
	maxScore := partial.TotalPoints
	passed := maxScore > 0 && score/maxScore*100 >= cfg.PassingScore
	sha, err := s.versionSHA(ctx, e, reg)
	if err != nil {
		return err
	}
	now := s.now()
	detail := "free answers graded by proctor " + a.Name
	if !passed {
		detail = fmt.Sprintf("scored %g of %g; free answers graded by proctor %s", score, maxScore, a.Name)
	}
	r := &evaluation.Result{ID: registry.NewID("res_"), RegistrationID: reg.ID, AgentID: reg.AgentID, EvaluationID: e.ID, VersionID: reg.VersionID,
		Version: reg.Version, ContentSHA256: sha, Passed: passed, Score: &score, MaxScore: &maxScore, CompletedAt: now,
		Trace: evaluation.NewTrace(e.Handler, job.CreatedAt, now, passed, false, detail,
			map[string]string{"submission": evaluation.HashInput(json.RawMessage(job.Submission))}),
		Details: map[string]any{"session_id": sess.ID, "proctor_agent_id": a.ID, "proctor_feedback": feedback, "scores": verdict.Scores}}
	if passed && e.Config.ValidDays > 0 {
		r.ExpiresAt = now.AddDate(0, 0, e.Config.ValidDays)
	}
	saved, err := s.sessions.GradeJob(ctx, sess.ID, a.ID, job.ID, r, e.Points, now)
	if errors.Is(err, registry.ErrConflict) {
		return conflict("already_graded", "this attempt has been graded", "An attempt takes one grade.")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, struct {
		Success   bool         `json:"success"`
		SessionID string       `json:"session_id"`
		Results   []resultView `json:"results"`
	}{true, sess.ID, []resultView{toResult(saved)}})
}
