package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// Store is what the worker needs of the database.
type Store interface {
	ClaimJob(ctx context.Context, now, lease time.Time) (*evaluation.Job, error)
	RetryJob(ctx context.Context, id string, next time.Time, reason string) error
	FailJob(ctx context.Context, id string, reason string, at time.Time) error
	CompleteJob(ctx context.Context, id string, r *evaluation.Result, points float64) (*evaluation.Result, error)
	Registration(ctx context.Context, id string) (*evaluation.Registration, error)
	VersionContent(ctx context.Context, versionID int64) ([]byte, error)
}

// Worker takes submitted jobs from the database and has them judged. Any
// number of workers, on any replicas, can run: a job is leased to one, and
// a job whose worker died is taken again when its lease runs out.
type Worker struct {
	Store       Store
	Judge       *Client // nil: jobs wait until a judge is configured
	Log         *slog.Logger
	Now         func() time.Time
	Lease       time.Duration // how long a worker holds a job (default 2 min)
	MaxAttempts int           // before a job fails (default 5)
	Poll        time.Duration // how often to look for work when idle (default 500 ms)
}

// CertificationSubmission is the stored submission of a certification.
type CertificationSubmission struct {
	Transcript []struct {
		PromptID string `json:"prompt_id"`
		Response string `json:"response"`
	} `json:"transcript"`
}

// BenchmarkSubmission is the stored submission of a benchmark.
type BenchmarkSubmission struct {
	Answers map[string]string `json:"answers"`
}

// BenchmarkPartial is what the server graded itself before judging.
type BenchmarkPartial struct {
	ChoicePoints float64 `json:"choice_points"`
	TotalPoints  float64 `json:"total_points"`
}

func (w *Worker) defaults() {
	if w.Now == nil {
		w.Now = time.Now
	}
	if w.Lease == 0 {
		w.Lease = 2 * time.Minute
	}
	if w.MaxAttempts == 0 {
		w.MaxAttempts = 5
	}
	if w.Poll == 0 {
		w.Poll = 500 * time.Millisecond
	}
	if w.Log == nil {
		w.Log = slog.New(slog.DiscardHandler)
	}
}

// Run works jobs until ctx ends. Without a judge it returns at once:
// submitted jobs wait in the database.
func (w *Worker) Run(ctx context.Context) {
	w.defaults()
	if w.Judge == nil {
		w.Log.Info("no judge configured; judging jobs wait until one is")
		return
	}
	for {
		worked, err := w.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			w.Log.Warn("judging", "error", err)
		}
		if worked {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(w.Poll):
		}
	}
}

// RunOnce works one due job, if there is one.
func (w *Worker) RunOnce(ctx context.Context) (bool, error) {
	w.defaults()
	now := w.Now()
	job, err := w.Store.ClaimJob(ctx, now, now.Add(w.Lease))
	if errors.Is(err, registry.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	log := w.Log.With("job_id", job.ID, "attempt", job.Attempts)
	callCtx, cancel := context.WithTimeout(ctx, w.Lease*9/10)
	res, points, err := w.judge(callCtx, job)
	cancel()
	if err != nil {
		reason := err.Error()
		if job.Attempts >= w.MaxAttempts {
			log.Error("judging failed for good", "error", reason)
			return true, w.Store.FailJob(ctx, job.ID, reason, w.Now())
		}
		backoff := min(time.Duration(1<<min(job.Attempts, 8))*time.Second, 5*time.Minute)
		log.Warn("judging failed; will retry", "error", reason, "retry_in", backoff)
		return true, w.Store.RetryJob(ctx, job.ID, w.Now().Add(backoff), reason)
	}
	if _, err := w.Store.CompleteJob(ctx, job.ID, res, points); err != nil {
		return true, fmt.Errorf("complete %s: %w", job.ID, err)
	}
	log.Info("judged", "passed", res.Passed)
	return true, nil
}

// judge grades one job under the version of the SIP its registration was
// made under.
func (w *Worker) judge(ctx context.Context, job *evaluation.Job) (*evaluation.Result, float64, error) {
	reg, err := w.Store.Registration(ctx, job.RegistrationID)
	if err != nil {
		return nil, 0, err
	}
	content, err := w.Store.VersionContent(ctx, reg.VersionID)
	if err != nil {
		return nil, 0, err
	}
	doc := registry.Parse("SIP", content)
	if doc.SIP == nil {
		return nil, 0, fmt.Errorf("the SIP version %d cannot be read", reg.VersionID)
	}
	sip := doc.SIP
	res := &evaluation.Result{ID: registry.NewID("res_"), RegistrationID: reg.ID, AgentID: job.AgentID, EvaluationID: job.EvaluationID,
		VersionID: reg.VersionID, Version: reg.Version, ContentSHA256: doc.SHA256, Details: map[string]any{}}
	var verdict *Verdict
	var maxScore, score float64
	switch {
	case sip.Config.Certification != nil:
		var sub CertificationSubmission
		if err := json.Unmarshal(job.Submission, &sub); err != nil {
			return nil, 0, err
		}
		responses := map[string]string{}
		for _, t := range sub.Transcript {
			responses[t.PromptID] = t.Response
		}
		msgs, ids := CertificationMessages(sip.Name, sip.Config.Certification, responses)
		if verdict, err = w.Judge.Ask(ctx, msgs, ids); err != nil {
			return nil, 0, err
		}
		score, res.Passed = CertificationScore(sip.Config.Certification, verdict)
		maxScore = 100
	case sip.Config.Benchmark != nil:
		var sub BenchmarkSubmission
		var partial BenchmarkPartial
		if err := json.Unmarshal(job.Submission, &sub); err != nil {
			return nil, 0, err
		}
		if err := json.Unmarshal(job.Partial, &partial); err != nil {
			return nil, 0, err
		}
		msgs, ids := BenchmarkMessages(sip.Name, sip.Config.Benchmark, sub.Answers)
		if verdict, err = w.Judge.Ask(ctx, msgs, ids); err != nil {
			return nil, 0, err
		}
		score = partial.ChoicePoints + BenchmarkFreeScore(sip.Config.Benchmark, verdict)
		maxScore = partial.TotalPoints
		res.Passed = maxScore > 0 && score/maxScore*100 >= sip.Config.Benchmark.PassingScore
	default:
		return nil, 0, fmt.Errorf("%s has no judged config", sip.ID)
	}
	now := w.Now()
	res.Score, res.MaxScore, res.CompletedAt = &score, &maxScore, now
	res.Details = map[string]any{"judge_model": verdict.Model, "judge_raw": verdict.Raw, "scores": verdict.Scores, "summary": verdict.Summary}
	if res.Passed && sip.Config.ValidDays > 0 {
		res.ExpiresAt = now.AddDate(0, 0, sip.Config.ValidDays)
	}
	detail := ""
	if !res.Passed {
		detail = fmt.Sprintf("scored %g of %g", score, maxScore)
	}
	res.Trace = evaluation.NewTrace(sip.Handler, job.CreatedAt, now, res.Passed, false, detail,
		map[string]string{"submission": evaluation.HashInput(json.RawMessage(job.Submission)), "judge_model": verdict.Model})
	return res, sip.Points, nil
}
