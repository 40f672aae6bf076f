package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/judge"
)

// jobStore is what the API needs of judging jobs.
type jobStore interface {
	CreateJob(ctx context.Context, j *evaluation.Job) (*evaluation.Job, bool, error)
	Job(ctx context.Context, id string) (*evaluation.Job, error)
	JobByRegistration(ctx context.Context, registrationID string) (*evaluation.Job, error)
	SubmitJob(ctx context.Context, id string, submission, partial []byte, at time.Time) (*evaluation.Job, error)
	ExpireJob(ctx context.Context, id string, at time.Time) error
}

// maxAnswer caps one free-text answer or response.
const maxAnswer = 16 << 10

type questionView struct {
	ID      string   `json:"id"`
	Prompt  string   `json:"prompt"`
	Choices []string `json:"choices,omitempty"`
	Points  float64  `json:"points"`
}

// startBenchmark hands out the questions without their answers.
func (s *Server) startBenchmark(c echo.Context, e *registry.Entry, reg *evaluation.Registration) error {
	moved, err := s.evals.MoveRegistration(c.Request().Context(), reg.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered, evaluation.RegInProgress},
		evaluation.RegInProgress, s.now())
	if err != nil {
		return err
	}
	cfg := e.Config.Benchmark
	qs := make([]questionView, 0, len(cfg.Questions))
	for _, q := range cfg.Questions {
		qs = append(qs, questionView{q.ID, q.Prompt, q.Choices, q.Points})
	}
	return c.JSON(http.StatusOK, struct {
		Success        bool           `json:"success"`
		EvaluationID   string         `json:"evaluation_id"`
		RegistrationID string         `json:"registration_id"`
		Questions      []questionView `json:"questions"`
		PassingScore   float64        `json:"passing_score"`
		ExpiresAt      string         `json:"expires_at"`
		Instructions   string         `json:"instructions"`
	}{true, e.ID, reg.ID, qs, cfg.PassingScore, timestamp(moved.StartedAt.Add(time.Duration(cfg.TimeLimitMinutes) * time.Minute)),
		"Answer every question and submit {\"answers\": {\"<question id>\": \"<answer>\"}} before expires_at; a multiple-choice answer is the text of the choice."})
}

type benchmarkSubmission struct {
	Answers map[string]string `json:"answers"`
}

// submitBenchmark grades multiple choice at once and queues free-response
// answers for the judge.
func (s *Server) submitBenchmark(c echo.Context, a *registry.Agent, e *registry.Entry, reg *evaluation.Registration) error {
	var sub benchmarkSubmission
	if err := bind(c, &sub); err != nil {
		return err
	}
	cfg := e.Config.Benchmark
	known := map[string]registry.Question{}
	for _, q := range cfg.Questions {
		known[q.ID] = q
	}
	for id, ans := range sub.Answers {
		if _, ok := known[id]; !ok {
			return badRequest("answers", "no question "+quote(id), "Answer the questions that start returned, by id.")
		}
		if len(ans) > maxAnswer {
			return &Error{Status: http.StatusRequestEntityTooLarge, Code: "payload_too_large", Field: "answers", Message: "an answer is longer than 16 KiB", Hint: "Shorten it."}
		}
	}
	if reg.StartedAt.IsZero() {
		return conflict("conflict", "the benchmark was not started", "Start it first: POST /api/v1/evaluations/"+e.ID+"/start.")
	}
	now := s.now()
	var choice, total float64
	free := false
	for _, q := range cfg.Questions {
		total += q.Points
		if !q.MultipleChoice() {
			free = true
		} else if sub.Answers[q.ID] == q.Answer {
			choice += q.Points
		}
	}
	late := now.After(reg.StartedAt.Add(time.Duration(cfg.TimeLimitMinutes) * time.Minute))
	inputs := map[string]string{"answers": evaluation.HashInput(sub.Answers)}
	if late || !free {
		passed := !late && total > 0 && choice/total*100 >= cfg.PassingScore
		detail := ""
		if late {
			detail = "submitted after expires_at"
		} else if !passed {
			detail = "below the passing score"
		}
		return s.grade(c, a, e, reg, attempt{passed: passed, late: late, detail: detail, started: reg.StartedAt, inputs: inputs,
			score: &choice, maxScore: &total})
	}
	submission, _ := json.Marshal(judge.BenchmarkSubmission{Answers: sub.Answers})
	partial, _ := json.Marshal(judge.BenchmarkPartial{ChoicePoints: choice, TotalPoints: total})
	job, _, err := s.jobs.CreateJob(c.Request().Context(), &evaluation.Job{ID: registry.NewID("job_"), RegistrationID: reg.ID, AgentID: a.ID,
		EvaluationID: e.ID, Status: evaluation.JobPending, CreatedAt: reg.StartedAt})
	if err != nil {
		return err
	}
	return s.queue(c, e, reg, job, submission, partial)
}

// queue submits a job for the judge and answers 202.
func (s *Server) queue(c echo.Context, e *registry.Entry, reg *evaluation.Registration, job *evaluation.Job, submission, partial []byte) error {
	ctx := c.Request().Context()
	queued, err := s.jobs.SubmitJob(ctx, job.ID, submission, partial, s.now())
	if errors.Is(err, registry.ErrConflict) {
		return conflict("already_completed", "this attempt was already submitted", "Poll its job: GET /api/v1/evaluations/"+e.ID+"/jobs/"+job.ID+".")
	}
	if err != nil {
		return err
	}
	job = queued
	if _, err := s.evals.MoveRegistration(ctx, reg.ID, []evaluation.RegistrationStatus{evaluation.RegInProgress}, evaluation.RegAwaitingGrading, s.now()); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, struct {
		Success bool   `json:"success"`
		Status  string `json:"status"`
		JobID   string `json:"job_id"`
		PollURL string `json:"poll_url"`
	}{true, string(job.Status), job.ID, "/api/v1/evaluations/" + e.ID + "/jobs/" + job.ID})
}

type promptView struct {
	ID       string             `json:"id"`
	Category string             `json:"category"`
	Messages []registry.Message `json:"messages"`
}

// startCertification opens the registration's one job and hands out the
// prompts; the rubric and should lists stay with the judge.
func (s *Server) startCertification(c echo.Context, a *registry.Agent, e *registry.Entry, reg *evaluation.Registration) error {
	ctx := c.Request().Context()
	now := s.now()
	cfg := e.Config.Certification
	nonce := registry.NewID("")
	job, created, err := s.jobs.CreateJob(ctx, &evaluation.Job{ID: registry.NewID("job_"), RegistrationID: reg.ID, AgentID: a.ID, EvaluationID: e.ID,
		Status: evaluation.JobPending, Nonce: nonce, NonceExpiresAt: now.Add(time.Duration(cfg.NonceValidityMinutes) * time.Minute), CreatedAt: now})
	if err != nil {
		return err
	}
	if _, err := s.evals.MoveRegistration(ctx, reg.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered, evaluation.RegInProgress},
		evaluation.RegInProgress, now); err != nil && !errors.Is(err, registry.ErrConflict) {
		return err
	}
	prompts := make([]promptView, 0, len(cfg.Prompts))
	for _, p := range cfg.Prompts {
		prompts = append(prompts, promptView{p.ID, p.Category, p.Messages})
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	type blueprint struct {
		Prompts      []promptView `json:"prompts"`
		PassingScore float64      `json:"passing_score"`
	}
	return c.JSON(status, struct {
		Success        bool      `json:"success"`
		EvaluationID   string    `json:"evaluation_id"`
		RegistrationID string    `json:"registration_id"`
		JobID          string    `json:"job_id"`
		Nonce          string    `json:"nonce"`
		NonceExpiresAt string    `json:"nonce_expires_at"`
		Blueprint      blueprint `json:"blueprint"`
		Instructions   string    `json:"instructions"`
	}{true, e.ID, reg.ID, job.ID, job.Nonce, timestamp(job.NonceExpiresAt), blueprint{prompts, cfg.PassingScore},
		"Continue each prompt's conversation with your reply, then submit {\"nonce\", \"transcript\": [{\"prompt_id\", \"response\"}]} with every prompt answered once, before nonce_expires_at."})
}

type certificationSubmission struct {
	Nonce      string `json:"nonce"`
	Transcript []struct {
		PromptID string `json:"prompt_id"`
		Response string `json:"response"`
	} `json:"transcript"`
}

// submitCertification checks the nonce and the transcript and queues the
// job for the judge.
func (s *Server) submitCertification(c echo.Context, a *registry.Agent, e *registry.Entry, reg *evaluation.Registration) error {
	ctx := c.Request().Context()
	var sub certificationSubmission
	if err := bind(c, &sub); err != nil {
		return err
	}
	job, err := s.jobs.JobByRegistration(ctx, reg.ID)
	if errors.Is(err, registry.ErrNotFound) {
		return conflict("conflict", "the certification was not started", "Start it first: POST /api/v1/evaluations/"+e.ID+"/start.")
	}
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(sub.Nonce), []byte(job.Nonce)) != 1 {
		return &Error{Status: http.StatusForbidden, Code: "forbidden", Field: "nonce", Message: "the nonce is not the one start gave", Hint: "Submit the nonce of your job."}
	}
	want := map[string]bool{}
	for _, p := range e.Config.Certification.Prompts {
		want[p.ID] = true
	}
	seen := map[string]bool{}
	for _, t := range sub.Transcript {
		switch {
		case !want[t.PromptID]:
			return badRequest("transcript", "no prompt "+quote(t.PromptID), "Answer the prompts start returned, by id.")
		case seen[t.PromptID]:
			return badRequest("transcript", "prompt "+quote(t.PromptID)+" is answered twice", "Answer every prompt exactly once.")
		case len(t.Response) > maxAnswer:
			return &Error{Status: http.StatusRequestEntityTooLarge, Code: "payload_too_large", Field: "transcript", Message: "a response is longer than 16 KiB", Hint: "Shorten it."}
		}
		seen[t.PromptID] = true
	}
	if len(seen) != len(want) {
		return badRequest("transcript", "every prompt must be answered exactly once", "Answer all the prompts start returned.")
	}
	now := s.now()
	if now.After(job.NonceExpiresAt) && job.Status == evaluation.JobPending {
		if err := s.jobs.ExpireJob(ctx, job.ID, now); err != nil && !errors.Is(err, registry.ErrConflict) {
			return err
		}
		return s.grade(c, a, e, reg, attempt{late: true, detail: "submitted after nonce_expires_at", started: job.CreatedAt,
			inputs: map[string]string{"transcript": evaluation.HashInput(sub.Transcript)}})
	}
	submission, _ := json.Marshal(sub.Transcript)
	submission, _ = json.Marshal(map[string]json.RawMessage{"transcript": submission})
	return s.queue(c, e, reg, job, submission, nil)
}

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
	job, err := s.jobs.Job(ctx, c.Param("job"))
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
	case job.Status == evaluation.JobSubmitted && !s.judgeConfigured:
		v.Note = "waiting for a judge: none is configured on this server yet; the job is kept and judged once one is"
	case job.Status == evaluation.JobSubmitted && job.Attempts > 0:
		v.Note = "the judge's last answer was unusable; retrying"
	case job.Status == evaluation.JobFailed:
		v.Note = "the judge could not grade this attempt; the registration was cancelled, so you may register again"
	}
	var result *resultView
	if job.ResultID != "" {
		r, err := s.evals.Result(ctx, job.ResultID)
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
	if s.sessions != nil {
		if sess, err := s.sessions.SessionByRegistration(c.Request().Context(), r.RegistrationID); err == nil {
			return s.sessionTranscript(c, r, sess)
		} else if !errors.Is(err, registry.ErrNotFound) {
			return err
		}
	}
	job, err := s.jobs.JobByRegistration(c.Request().Context(), r.RegistrationID)
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
