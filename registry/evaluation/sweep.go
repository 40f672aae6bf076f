package evaluation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sipregistry/sip/registry"
)

// GradingGrace is how long after a session's end its proctor may still
// grade it. Past that the session ends with not_graded results.
const GradingGrace = time.Hour

// sweepBatch bounds the rows one sweep reads of each kind.
const sweepBatch = 100

// Swept counts what a sweep ended.
type Swept struct {
	Attempts int // ended as expired
	Sessions int // ended as not_graded
}

// Sweep ends what can no longer end any other way: an attempt whose
// deadline passed with no submission gets an expired result, and a session
// that ended GradingGrace ago with no grade gets a not_graded result for
// each participant. Both free the agents to register again. Any number of
// replicas may sweep at once: each end is a conditional write, and a
// submission or grade that gets there first wins.
func (s *Service) Sweep(ctx context.Context) (Swept, error) {
	var out Swept
	now := s.now()
	regs, err := s.attempts.OverdueRegistrations(ctx, now, sweepBatch)
	if err != nil {
		return out, err
	}
	for _, reg := range regs {
		ended, err := s.expire(ctx, reg, now)
		if err != nil {
			return out, err
		}
		if ended {
			out.Attempts++
		}
	}
	if !s.keepsSessions() {
		return out, nil
	}
	sessions, err := s.sessions.OverdueSessions(ctx, now.Add(-GradingGrace), sweepBatch)
	if err != nil {
		return out, err
	}
	for _, sess := range sessions {
		ended, err := s.endUngraded(ctx, sess, now)
		if err != nil {
			return out, err
		}
		if ended {
			out.Sessions++
		}
	}
	return out, nil
}

// expire ends an overdue attempt with an expired result under its pinned
// version. It reports false when the attempt had ended meanwhile.
func (s *Service) expire(ctx context.Context, reg *Registration, now time.Time) (bool, error) {
	def, err := s.defs.pinned(ctx, reg.EvaluationID, reg.VersionID, nil)
	if err != nil {
		return false, err
	}
	g := grade{outcome: OutcomeExpired, reason: "no submission before the deadline",
		execution: []Check{{Name: "time_limit", Passed: false,
			Message: fmt.Sprintf("no submission by the deadline, %s after the start", round(reg.Deadline.Sub(reg.StartedAt)))}}}
	if def.Config.Proctor != nil && s.keepsSessions() {
		// A proctored attempt's deadline is its proctor's claim: once
		// claimed, its session ends it.
		if _, err := s.sessions.SessionByRegistration(ctx, reg.ID); err == nil {
			return false, nil
		} else if !errors.Is(err, registry.ErrNotFound) {
			return false, err
		}
		waited := round(reg.Deadline.Sub(reg.StartedAt))
		g = grade{outcome: OutcomeNotGraded, reason: "no proctor claimed the attempt within " + waited.String(),
			execution: []Check{{Name: "proctor_claim", Passed: false,
				Message: fmt.Sprintf("no proctor claimed the attempt by its deadline, %s after the start", waited)}}}
	}
	res, points := s.newResult(def, reg, g, now)
	_, err = s.attempts.RecordResult(ctx, res, points)
	if errors.Is(err, registry.ErrConflict) {
		return false, nil // submitted, cancelled or swept elsewhere first
	}
	return err == nil, err
}

// endOverdue ends the agent's open attempt at e, past its deadline, as
// the sweeper would (an expired result), for an operation that met it
// before the sweeper did, and returns that operation's refusal: the
// attempt is over. A new one starts with a registration, under
// Register's rules (a retry delay after a failure included).
func (s *Service) endOverdue(ctx context.Context, agentID string, e *registry.Entry, now time.Time) error {
	reg, err := s.attempts.OpenRegistration(ctx, agentID, e.ID)
	if errors.Is(err, registry.ErrNotFound) {
		return NotRegistered(e) // ended meanwhile
	}
	if err != nil {
		return err
	}
	if reg.Overdue(now) {
		if _, err := s.expire(ctx, reg, now); err != nil {
			return err
		}
	}
	return refuse(registry.ErrGone, "gone", "your attempt at "+e.ID+" ran out of time, and has ended as expired",
		"Register again for another attempt (start with {\"register\": true} registers and starts).")
}

// endUngraded ends a session nobody graded in time, with a not_graded
// result for each participant still waiting, each under its own pinned
// version. It reports false when a grade got there first.
func (s *Service) endUngraded(ctx context.Context, sess *Session, now time.Time) (bool, error) {
	ps, err := s.sessions.Participants(ctx, sess.ID)
	if err != nil {
		return false, err
	}
	reason := "the session ended at " + sess.EndsAt.UTC().Format(time.RFC3339) + " and no proctor graded it within " + round(GradingGrace).String()
	if sess.ProctorID == "" {
		reason = "the session ended at " + sess.EndsAt.UTC().Format(time.RFC3339) + " and no proctor claimed it"
	}
	var results []*Result
	for _, p := range ps {
		if p.RegistrationID == "" {
			continue // the proctor
		}
		reg, err := s.attempts.Registration(ctx, p.RegistrationID)
		if err != nil {
			return false, err
		}
		if !reg.Status.Open() {
			continue
		}
		def, err := s.defs.pinned(ctx, reg.EvaluationID, reg.VersionID, nil)
		if err != nil {
			return false, err
		}
		r, _ := s.newResult(def, reg, grade{outcome: OutcomeNotGraded, reason: reason, started: sess.StartedAt,
			details: map[string]any{"session_id": sess.ID}}, now)
		results = append(results, r)
	}
	_, err = s.sessions.EndSession(ctx, sess.ID, results, now)
	if errors.Is(err, registry.ErrConflict) {
		return false, nil
	}
	return err == nil, err
}

// Sweeper runs Sweep every Interval until its context ends.
type Sweeper struct {
	Service  *Service
	Interval time.Duration // default 10 s
	Log      *slog.Logger
}

// Run sweeps until ctx ends.
func (w *Sweeper) Run(ctx context.Context) {
	interval, log := w.Interval, w.Log
	if interval <= 0 {
		interval = 10 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		swept, err := w.Service.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("sweeping ended attempts", "error", err)
		case swept.Attempts > 0 || swept.Sessions > 0:
			log.Info("swept", "expired_attempts", swept.Attempts, "ungraded_sessions", swept.Sessions)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
