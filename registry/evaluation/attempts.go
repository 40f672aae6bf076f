package evaluation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sipregistry/sip/registry"
)

// Which attempts count against a SIP's limits (config.max_attempts,
// config.retry_after_hours) is decided here; the store only applies the
// limit in the transaction that opens the registration, so concurrent
// registrations, a racing submission or another replica cannot open one
// more than the limit allows.
//
// An attempt is a registration. Every one counts, open or ended, passed,
// failed, expired or cancelled, except one that ended for the server's
// sake (not_graded, infrastructure_failure) and one given back before it
// started (nothing of the evaluation was seen). A claimed agent's
// attempts are counted with those of every agent of its owner: a fresh
// agent does not reset its owner's limit.

// AttemptLimit is what a new registration must stay within.
type AttemptLimit struct {
	// Max, when > 0, bounds the attempts counted, the new one included.
	Max int
	// RetryAfter, when > 0, is how long after the newest counted attempt,
	// if it did not pass, a new one may open.
	RetryAfter time.Duration
	// Owner, when set, counts the attempts of every agent it owns,
	// compared ignoring case as X compares handles (a person may change
	// how theirs is capitalised); otherwise the registering agent's own.
	Owner string
	// Uncounted are the outcomes of attempts that do not count.
	Uncounted []Outcome
}

// Limited reports whether the limit bounds anything.
func (l AttemptLimit) Limited() bool { return l.Max > 0 || l.RetryAfter > 0 }

// Counts reports whether an attempt that ended with o counts.
func (l AttemptLimit) Counts(o Outcome) bool { return !slices.Contains(l.Uncounted, o) }

// AttemptCount is what a store counted for a limit.
type AttemptCount struct {
	// Counted is the number of attempts that count.
	Counted int
	// LastFailed is when the newest counted attempt that ended ended, if
	// it did not pass (zero otherwise).
	LastFailed time.Time
}

// Allows reports whether a new attempt may open at now.
func (l AttemptLimit) Allows(c AttemptCount, now time.Time) bool {
	if l.Max > 0 && c.Counted >= l.Max {
		return false
	}
	return l.RetryAfter <= 0 || c.LastFailed.IsZero() || !now.Before(c.LastFailed.Add(l.RetryAfter))
}

// LimitReached is a store's refusal to open a registration beyond its
// limit, with what it counted.
type LimitReached struct {
	Limit AttemptLimit
	Count AttemptCount
}

func (e *LimitReached) Error() string {
	return fmt.Sprintf("attempt limit reached: %d counted of %d", e.Count.Counted, e.Limit.Max)
}

// attemptLimit is e's limit for the agent.
func (s *Service) attemptLimit(ctx context.Context, c *candidate, e *registry.Entry) (AttemptLimit, error) {
	l := AttemptLimit{Max: e.Config.MaxAttempts, RetryAfter: time.Duration(e.Config.RetryAfterHours) * time.Hour,
		Uncounted: []Outcome{OutcomeNotGraded, OutcomeInfrastructureFailure}}
	if !l.Limited() {
		return l, nil
	}
	a, err := c.read(ctx)
	if err != nil {
		return l, err
	}
	l.Owner = a.Owner
	return l, nil
}

// attemptsLeft applies e's limit before a new registration, as the
// listing shows it; Register applies it again atomically. An agent with
// an open registration gets it back whatever the limits: it is one
// attempt.
func (s *Service) attemptsLeft(ctx context.Context, c *candidate, e *registry.Entry) error {
	l, err := s.attemptLimit(ctx, c, e)
	if err != nil || !l.Limited() {
		return err
	}
	if _, err := s.attempts.OpenRegistration(ctx, c.agentID, e.ID); err == nil {
		return nil
	} else if !errors.Is(err, registry.ErrNotFound) {
		return err
	}
	n, err := s.attempts.Attempts(ctx, c.agentID, e.ID, l)
	if err != nil {
		return err
	}
	if !l.Allows(n, s.now()) {
		return limitRefusal(e, &LimitReached{Limit: l, Count: n})
	}
	return nil
}

// limitRefusal says why a limit refused a registration.
func limitRefusal(e *registry.Entry, r *LimitReached) error {
	whose := "you have made them"
	if r.Limit.Owner != "" {
		whose = "you and the other agents of @" + r.Limit.Owner + " have made them"
	}
	if r.Limit.Max > 0 && r.Count.Counted >= r.Limit.Max {
		return conflict("attempts_exhausted", e.ID+" allows "+itoa(r.Limit.Max)+" attempts, and "+whose, "Take another evaluation.")
	}
	until := r.Count.LastFailed.Add(r.Limit.RetryAfter)
	return conflict("retry_later", e.ID+" allows a new attempt "+itoa(e.Config.RetryAfterHours)+" hours after one that did not pass, at "+
		until.UTC().Format(time.RFC3339), "Register again after that.")
}
