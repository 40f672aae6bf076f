package evaluation

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"time"

	"github.com/sipregistry/sip/registry"
)

// certificationRunner runs agent certifications: the agent answers the
// SIP's prompts; the judge scores the answers against the rubric.
type certificationRunner struct{}

func (certificationRunner) Handler() string { return "agent_certification_handler" }

func (certificationRunner) Runs(s *Service) bool { return s.keepsJobs() }

// TranscriptEntry is the agent's response to one prompt.
type TranscriptEntry struct {
	PromptID string `json:"prompt_id"`
	Response string `json:"response"`
}

// CertificationSubmission answers a certification's prompts, bound to its
// start by the nonce.
type CertificationSubmission struct {
	Nonce      string            `json:"nonce"`
	Transcript []TranscriptEntry `json:"transcript"`
}

// Start opens the registration's one job and hands out the prompts; the
// rubric and should lists stay with the judge.
func (certificationRunner) Start(ctx context.Context, t *Take) (*Started, error) {
	if err := t.open(ctx); err != nil {
		return nil, err
	}
	now := t.s.now()
	cfg := t.Def.Config.Certification
	job, created, err := t.s.jobs.CreateJob(ctx, &Job{ID: registry.NewID("job_"), RegistrationID: t.Reg.ID, AgentID: t.Reg.AgentID,
		EvaluationID: t.Reg.EvaluationID, Status: JobPending, Nonce: registry.NewID(""),
		NonceExpiresAt: now.Add(time.Duration(cfg.NonceValidityMinutes) * time.Minute), CreatedAt: now})
	if err != nil {
		return nil, err
	}
	if _, err := t.s.moveToStarted(ctx, t.Reg, job.NonceExpiresAt); err != nil && !isConflict(err) {
		return nil, err
	}
	prompts := make([]registry.Prompt, 0, len(cfg.Prompts))
	for _, p := range cfg.Prompts {
		prompts = append(prompts, registry.Prompt{ID: p.ID, Category: p.Category, Messages: p.Messages})
	}
	return &Started{Created: created, Registration: t.Reg, Job: job, Prompts: prompts, PassingScore: cfg.PassingScore,
		Instructions: "Continue each prompt's conversation with your reply, then submit {\"nonce\", \"transcript\": [{\"prompt_id\", \"response\"}]} with every prompt answered once, before nonce_expires_at."}, nil
}

// Submit checks the nonce and the transcript against the pinned prompts
// and queues the job for the judge.
func (certificationRunner) Submit(ctx context.Context, t *Take, decode func(any) error) (*Submitted, error) {
	if err := t.open(ctx); err != nil {
		return nil, submitRefusal(t.Entry, err)
	}
	var sub CertificationSubmission
	if err := decode(&sub); err != nil {
		return nil, err
	}
	switch {
	case sub.Nonce == "":
		return nil, missing("nonce", "Submit the nonce start returned with the job.")
	case len(sub.Transcript) == 0:
		return nil, missing("transcript", "Submit {\"nonce\", \"transcript\": [{\"prompt_id\", \"response\"}]}, every prompt answered once.")
	}
	job, err := t.s.jobs.JobByRegistration(ctx, t.Reg.ID)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, conflict("conflict", "the certification was not started", "Start it first: POST "+evaluationPath(t.Entry)+"/start.")
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(sub.Nonce), []byte(job.Nonce)) != 1 {
		r := forbidden("forbidden", "the nonce is not the one start gave", "Submit the nonce of your job.")
		r.Field = "nonce"
		return nil, r
	}
	want := map[string]bool{}
	for _, p := range t.Def.Config.Certification.Prompts {
		want[p.ID] = true
	}
	seen := map[string]bool{}
	for _, e := range sub.Transcript {
		switch {
		case !want[e.PromptID]:
			return nil, invalid("transcript", "no prompt "+quote(e.PromptID), "Answer the prompts start returned, by id.")
		case seen[e.PromptID]:
			return nil, invalid("transcript", "prompt "+quote(e.PromptID)+" is answered twice", "Answer every prompt exactly once.")
		case len(e.Response) > MaxAnswer:
			return nil, tooLarge("transcript", "a response is longer than 16 KiB", "Shorten it.")
		}
		seen[e.PromptID] = true
	}
	if len(seen) != len(want) {
		return nil, invalid("transcript", "every prompt must be answered exactly once", "Answer all the prompts start returned.")
	}
	now := t.s.now()
	if now.After(job.NonceExpiresAt) && job.Status == JobPending {
		if err := t.s.jobs.ExpireJob(ctx, job.ID, now); err != nil && !isConflict(err) {
			return nil, err
		}
		return t.s.recordGrade(ctx, t, grade{outcome: OutcomeExpired, reason: "submitted after nonce_expires_at", started: job.CreatedAt,
			deadline: job.NonceExpiresAt, inputs: map[string]any{"transcript": digest(sub.Transcript)}})
	}
	submission, _ := json.Marshal(struct {
		Transcript []TranscriptEntry `json:"transcript"`
	}{sub.Transcript})
	return t.s.queue(ctx, t, job, submission, nil)
}

// judge has the judge score a certification's transcript under the
// pinned prompts and rubric.
func (certificationRunner) judge(ctx context.Context, _ *Service, j Judge, def *Definition, job *Job) (grade, error) {
	var sub CertificationSubmission
	if err := json.Unmarshal(job.Submission, &sub); err != nil {
		return grade{}, err
	}
	responses := map[string]string{}
	for _, e := range sub.Transcript {
		responses[e.PromptID] = e.Response
	}
	cfg := def.Config.Certification
	msgs, ids := CertificationMessages(def.Name, cfg, responses)
	verdict, err := j.Ask(ctx, msgs, ids)
	if err != nil {
		return grade{}, err
	}
	score, maxScore := CertificationScore(cfg, verdict.Grades()), 100.0
	g := grade{passed: Passes(score, maxScore, cfg.PassingScore), score: &score, maxScore: &maxScore, started: job.CreatedAt,
		execution: []Check{acceptedInTime},
		inputs:    map[string]any{"submission": digest(json.RawMessage(job.Submission)), "judge_model": verdict.Model},
		goal:      []Check{passRule(score, maxScore, cfg.PassingScore)},
		details:   map[string]any{"judge_model": verdict.Model, "judge_raw": verdict.Raw, "scores": CertificationScores(cfg, verdict), "summary": verdict.Summary}}
	if !g.passed {
		g.reason = "below the passing score"
	}
	return g, nil
}

func isConflict(err error) bool { return errors.Is(err, registry.ErrConflict) }
