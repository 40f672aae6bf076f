package evaluation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/sipregistry/sip/registry"
)

// A benchmark's free answers are graded by a proctor when no judge is
// configured: the server adds the points it graded itself, clamps nothing
// (a grade over a question's points is refused), and decides the pass.

func (benchmarkRunner) proctors(s *Service, def *Definition) bool {
	if s.judgeConfigured || !s.keepsSessions() || def.Config.Benchmark == nil {
		return false
	}
	for _, q := range def.Config.Benchmark.Questions {
		if !q.MultipleChoice() {
			return true
		}
	}
	return false
}

func (benchmarkRunner) pending(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent) ([]Pending, error) {
	return s.pendingRegistrations(ctx, e, proctor, RegAwaitingGrading)
}

func (benchmarkRunner) claim(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent, req ClaimRequest) (*Claimed, error) {
	reg, sess, candidate, err := s.claimRegistration(ctx, e, proctor, req, RegAwaitingGrading, nil)
	if err != nil {
		return nil, err
	}
	def, err := s.defs.pinned(ctx, reg.EvaluationID, reg.VersionID, e)
	if err != nil {
		return nil, err
	}
	job, err := s.jobs.JobByRegistration(ctx, reg.ID)
	if err != nil {
		return nil, err
	}
	var sub BenchmarkSubmission
	if err := json.Unmarshal(job.Submission, &sub); err != nil {
		return nil, err
	}
	cfg, err := s.questions(def, reg.ID)
	if err != nil {
		return nil, err
	}
	answers := []FreeAnswer{}
	for _, q := range cfg.Questions {
		if !q.MultipleChoice() {
			answers = append(answers, FreeAnswer{QuestionID: q.ID, Prompt: q.Prompt, Rubric: q.Rubric, Points: q.Points, Answer: sub.Answers[q.ID]})
		}
	}
	return &Claimed{Session: sess, Registration: reg, Candidate: candidate, Answers: answers}, nil
}

func (benchmarkRunner) grade(ctx context.Context, s *Service, e *registry.Entry, proctor *registry.Agent, req GradeRequest) (*Graded, error) {
	if req.Scores == nil {
		return nil, invalid("scores", "a benchmark's free answers are graded with scores: {question id: points}", "Send {\"registration_id\", \"scores\": {…}}.")
	}
	if req.RegistrationID == "" {
		return nil, missing("registration_id", "Send the registration you claimed.")
	}
	sess, err := s.sessions.SessionByRegistration(ctx, req.RegistrationID)
	if errors.Is(err, registry.ErrNotFound) || err == nil && sess.EvaluationID != e.ID {
		return nil, notFound("no claimed session for that registration", "Claim it first: POST "+evaluationPath(e)+"/proctor/claim.")
	}
	if err != nil {
		return nil, err
	}
	if sess.ProctorID != proctor.ID {
		return nil, forbidden("not_the_proctor", "only the proctor who claimed this attempt can grade it", "Grade the attempts you claimed.")
	}
	reg, err := s.attempts.Registration(ctx, req.RegistrationID)
	if err != nil {
		return nil, err
	}
	def, err := s.defs.pinned(ctx, reg.EvaluationID, reg.VersionID, e)
	if err != nil {
		return nil, err
	}
	cfg, err := s.questions(def, reg.ID)
	if err != nil {
		return nil, err
	}
	free := map[string]float64{}
	for _, q := range cfg.Questions {
		if !q.MultipleChoice() {
			free[q.ID] = q.Points
		}
	}
	var scores []ItemScore
	ids := make([]string, 0, len(req.Scores))
	for id := range req.Scores {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		max, ok := free[id]
		if !ok {
			return nil, invalid("scores", "no free-response question "+quote(id), "Grade the questions the claim listed, by question_id.")
		}
		if v := req.Scores[id]; v != v || v < 0 || v > max {
			return nil, invalid("scores", fmt.Sprintf("the grade of %s must be from 0 to %g", id, max), "Grade each answer within its question's points.")
		}
		scores = append(scores, ItemScore{PromptID: id, Score: req.Scores[id]})
	}
	if len(req.Scores) != len(free) {
		return nil, invalid("scores", "grade every free-response question once", "Send a grade for each question the claim listed.")
	}
	job, err := s.jobs.JobByRegistration(ctx, reg.ID)
	if err != nil {
		return nil, err
	}
	var partial benchmarkPartial
	if err := json.Unmarshal(job.Partial, &partial); err != nil {
		return nil, err
	}
	score := partial.ChoicePoints + BenchmarkFreeScore(cfg, req.Scores)
	g := benchmarkGrade(def, job, score, partial.TotalPoints)
	if g.passed {
		g.reason = ""
	}
	g.goal = append(g.goal, Check{Name: "proctor", Passed: true, Message: "free answers graded by proctor " + proctor.ID})
	g.details = map[string]any{"session_id": sess.ID, "proctor_agent_id": proctor.ID, "proctor_feedback": req.Feedback, "scores": scores}
	if !g.passed {
		g.reason = fmt.Sprintf("scored %g of %g; free answers graded by proctor %s", score, partial.TotalPoints, proctor.Name)
	}
	now := s.now()
	r, points := s.newResult(def, reg, g, now)
	saved, err := s.proctorStore.GradeJob(ctx, sess.ID, proctor.ID, job.ID, r, points, now, s.seatCheck(def, proctor, []string{reg.AgentID}))
	var refused *Refusal
	if errors.As(err, &refused) {
		return nil, refused
	}
	if errors.Is(err, registry.ErrConflict) {
		return nil, conflict("already_graded", "this attempt has been graded", "An attempt takes one grade.")
	}
	if err != nil {
		return nil, err
	}
	return &Graded{Session: sess, Results: []*Result{saved}}, nil
}
