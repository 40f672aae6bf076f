package evaluation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/sipregistry/sip/registry"
)

// Judge grades answers that need judgement (registry/judge.Client).
type Judge interface {
	Ask(ctx context.Context, messages []JudgeMessage, ids []string) (*Verdict, error)
}

// judged is a runner whose submissions a judge grades.
type judged interface {
	judge(ctx context.Context, s *Service, j Judge, def *Definition, job *Job) (grade, error)
}

// Worker takes submitted jobs from the database and has them judged,
// several at once. Any number of workers, on any replicas, can run: a job
// is leased to one, the lease is extended while the judge works, and a job
// whose worker died is taken again as soon as its short lease runs out.
type Worker struct {
	Service *Service
	Judge   Judge // nil: jobs wait until a judge is configured
	Log     *slog.Logger
	// Lease is how long a claim holds a job without being extended
	// (default 15 s); the worker extends it every Lease/3.
	Lease time.Duration
	// Timeout bounds one judge call (default 2 min).
	Timeout     time.Duration
	MaxAttempts int           // unusable answers before a job fails (default 5)
	Poll        time.Duration // how often to look for work when idle (default 500 ms)
	Concurrency int           // jobs judged at once (default 16: judge calls wait on the network, not the CPU)
	// OutageWindow is how long a job waits out a judge that is down
	// (unreachable, timing out, answering 429 or 5xx), counted from its
	// submission, before it ends as infrastructure_failure (default 1 h).
	OutageWindow time.Duration
	// MaxBackoff bounds the wait between two tries of a job while the
	// judge is down (default 1 min).
	MaxBackoff time.Duration

	health judgeHealth
}

// JudgeHealth is what a worker last saw of its judge.
type JudgeHealth struct {
	Configured bool
	Up         bool      // the last call was answered (or none failed yet)
	Since      time.Time // when Up last changed; zero before the first call
	LastError  string    // the last outage's error, while down
	// Outages counts calls that found the judge down, by kind
	// ("unreachable", "timeout", "unavailable"); BadAnswers the unusable
	// answers.
	Outages    map[string]int64
	BadAnswers int64
}

type judgeHealth struct {
	mu sync.Mutex
	h  JudgeHealth
}

// Health is what the worker last saw of the judge, for /readyz and metrics.
func (w *Worker) Health() JudgeHealth {
	w.health.mu.Lock()
	defer w.health.mu.Unlock()
	h := w.health.h
	h.Configured = w.Judge != nil
	if h.Since.IsZero() {
		h.Up = true
	}
	h.Outages = maps.Clone(h.Outages)
	return h
}

func (w *Worker) record(err error, now time.Time) {
	w.health.mu.Lock()
	defer w.health.mu.Unlock()
	h := &w.health.h
	up := !IsJudgeOutage(err)
	if first := h.Since.IsZero(); first || up != h.Up {
		switch {
		case !up:
			w.Log.Warn("the judge is down; judging jobs wait", "error", err)
		case !first:
			w.Log.Info("the judge answers again", "down_since", h.Since)
		}
		h.Up, h.Since = up, now
	}
	switch {
	case err == nil:
		h.LastError = ""
	case errors.Is(err, ErrJudgeBadAnswer):
		h.BadAnswers++
	case up:
	default:
		h.LastError = err.Error()
		if h.Outages == nil {
			h.Outages = map[string]int64{}
		}
		h.Outages[outageKind(err)]++
	}
}

func outageKind(err error) string {
	switch {
	case errors.Is(err, ErrJudgeTimeout):
		return "timeout"
	case errors.Is(err, ErrJudgeUnavailable):
		return "unavailable"
	}
	return "unreachable"
}

func (w *Worker) defaults() {
	if w.Lease == 0 {
		w.Lease = 15 * time.Second
	}
	if w.Timeout == 0 {
		w.Timeout = 2 * time.Minute
	}
	if w.MaxAttempts == 0 {
		w.MaxAttempts = 5
	}
	if w.Poll == 0 {
		w.Poll = 500 * time.Millisecond
	}
	if w.Concurrency <= 0 {
		w.Concurrency = 16
	}
	if w.OutageWindow == 0 {
		w.OutageWindow = time.Hour
	}
	if w.MaxBackoff == 0 {
		w.MaxBackoff = time.Minute
	}
	if w.Log == nil {
		w.Log = slog.New(slog.DiscardHandler)
	}
}

// Run works jobs with Concurrency loops until ctx ends. Without a judge it
// returns at once: submitted jobs wait in the database.
func (w *Worker) Run(ctx context.Context) {
	w.defaults()
	if w.Judge == nil {
		w.Log.Info("no judge configured; judging jobs wait until one is")
		return
	}
	var wg sync.WaitGroup
	for range w.Concurrency {
		wg.Go(func() {
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
		})
	}
	wg.Wait()
}

// RunOnce works one due job, if there is one.
func (w *Worker) RunOnce(ctx context.Context) (bool, error) {
	w.defaults()
	s := w.Service
	now := s.now()
	job, err := s.judging.ClaimJob(ctx, now, now.Add(w.Lease))
	if errors.Is(err, registry.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	log := w.Log.With("job_id", job.ID, "attempt", job.Attempts)
	res, points, err := w.work(ctx, job)
	if ctx.Err() == nil && (err == nil || errors.Is(err, ErrJudgeBadAnswer) || IsJudgeOutage(err)) {
		w.record(err, s.now())
	}
	if err != nil {
		reason := err.Error()
		backoff := min(time.Duration(1<<min(job.Attempts, 8))*time.Second, 5*time.Minute)
		switch {
		case IsJudgeOutage(err) && s.now().Sub(job.CreatedAt) < w.OutageWindow:
			// The judge is down: the job waits, and is tried again often
			// enough to notice it is back.
			backoff = min(backoff, w.MaxBackoff)
			log.Warn("the judge is down; the job waits", "error", reason, "retry_in", backoff)
			return true, s.judging.RetryJob(ctx, job.ID, s.now().Add(backoff), reason)
		case IsJudgeOutage(err):
			reason = fmt.Sprintf("the judge was down for longer than %s: %s", w.OutageWindow, reason)
		case job.Attempts < w.MaxAttempts:
			log.Warn("judging failed; will retry", "error", reason, "retry_in", backoff)
			return true, s.judging.RetryJob(ctx, job.ID, s.now().Add(backoff), reason)
		}
		log.Error("judging failed for good", "error", reason)
		return true, w.fail(ctx, job, reason)
	}
	if _, err := s.judging.CompleteJob(ctx, job.ID, res, points); err != nil {
		return true, fmt.Errorf("complete %s: %w", job.ID, err)
	}
	log.Info("judged", "passed", res.Passed)
	return true, nil
}

// work judges one job under the definition its registration pinned,
// extending the job's lease while the judge thinks.
func (w *Worker) work(ctx context.Context, job *Job) (*Result, float64, error) {
	s := w.Service
	reg, def, err := s.pinnedJob(ctx, job)
	if err != nil {
		return nil, 0, err
	}
	r, ok := s.runners[def.Handler].(judged)
	if !ok {
		return nil, 0, fmt.Errorf("%s (%s) is not judged", def.ID, def.Handler)
	}
	callCtx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	stop := w.keepLease(callCtx, job.ID)
	g, err := r.judge(callCtx, s, w.Judge, def, job)
	stop()
	if err != nil {
		return nil, 0, err
	}
	g.execution = append(g.execution, judgeCheck(job))
	res, points := s.newResult(def, reg, g, s.now())
	return res, points, nil
}

func judgeCheck(job *Job) Check {
	msg := fmt.Sprintf("judged at attempt %d", job.Attempts)
	if job.LastError != "" {
		msg += "; the last failed attempt: " + job.LastError
	}
	return Check{Name: "judge", Passed: true, Message: msg}
}

// keepLease extends a job's lease every Lease/3 until stop is called.
func (w *Worker) keepLease(ctx context.Context, id string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(w.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := w.Service.judging.ExtendJobLease(ctx, id, w.Service.now().Add(w.Lease)); err != nil && ctx.Err() == nil {
					w.Log.Warn("extending a job's lease", "job_id", id, "error", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// fail ends a job the judge could not grade with an
// infrastructure_failure result, which frees the agent to register again.
func (w *Worker) fail(ctx context.Context, job *Job, reason string) error {
	s := w.Service
	reg, def, err := s.pinnedJob(ctx, job)
	if err != nil {
		return err
	}
	res, _ := s.newResult(def, reg, grade{outcome: OutcomeInfrastructureFailure, started: job.CreatedAt,
		reason:    fmt.Sprintf("the judge could not grade it in %d attempts: %s", job.Attempts, reason),
		execution: []Check{acceptedInTime}, inputs: map[string]any{"submission": digest(json.RawMessage(job.Submission))}}, s.now())
	return s.judging.FailJob(ctx, job.ID, reason, res)
}

// pinnedJob reads a job's registration and the definition it pinned.
func (s *Service) pinnedJob(ctx context.Context, job *Job) (*Registration, *Definition, error) {
	reg, err := s.attempts.Registration(ctx, job.RegistrationID)
	if err != nil {
		return nil, nil, err
	}
	def, err := s.defs.pinned(ctx, reg.EvaluationID, reg.VersionID, nil)
	return reg, def, err
}
