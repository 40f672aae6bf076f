package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry"
)

// permanentError is a failure that another attempt cannot fix (a payload
// that does not parse); the delivery is given up at once.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(err error) error { return &permanentError{err} }

// work claims and processes deliveries until ctx ends.
func (a *App) work(ctx context.Context) {
	tick := time.NewTicker(a.cfg.Poll)
	defer tick.Stop()
	for ctx.Err() == nil {
		now := a.now()
		d, err := a.store.ClaimDelivery(ctx, now, now.Add(a.cfg.Lease))
		if err == nil {
			a.notify() // another worker may take the next one
			a.process(ctx, d)
			continue
		}
		if !errors.Is(err, registry.ErrNotFound) && ctx.Err() == nil {
			a.log.Warn("cannot claim a delivery", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-a.wake:
		case <-tick.C:
		}
	}
}

// process runs one delivery and records the outcome. Shutting down does
// not cut it short: it gets until its lease ends.
func (a *App) process(ctx context.Context, d *inbox.Delivery) {
	start := time.Now()
	log := a.log.With("delivery", d.ID, "event", d.Event, "action", d.Action, "attempt", d.Attempts)
	workCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.Lease-time.Second)
	err := a.safeHandle(workCtx, d)
	cancel()
	a.metrics.duration.WithLabelValues(d.Event).Observe(time.Since(start).Seconds())
	store, cancelStore := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancelStore()
	now := a.now()
	var perm *permanentError
	if err != nil && uninstalled(err) {
		err = permanent(fmt.Errorf("the App is no longer installed: %w", err))
	}
	switch {
	case err == nil:
		a.metrics.processed.WithLabelValues(d.Event, "done").Inc()
		err = a.store.CompleteDelivery(store, d.ID, now)
		log.Info("delivery processed", "duration", time.Since(start))
	case errors.As(err, &perm) || d.Attempts >= a.cfg.MaxAttempts:
		a.metrics.processed.WithLabelValues(d.Event, "dead").Inc()
		log.Error("delivery given up", "err", err)
		err = a.store.KillDelivery(store, d.ID, err.Error(), now)
	default:
		wait := a.retryAfter(err, d.Attempts)
		a.metrics.processed.WithLabelValues(d.Event, "retry").Inc()
		log.Warn("delivery failed; will retry", "err", err, "retry_in", wait)
		err = a.store.RetryDelivery(store, d.ID, now.Add(wait), err.Error())
	}
	if err != nil {
		// The lease runs out and another worker takes the delivery again.
		log.Error("cannot record the outcome of a delivery", "err", err)
	}
}

// safeHandle turns a panic into a failed attempt with its stack.
func (a *App) safeHandle(ctx context.Context, d *inbox.Delivery) (err error) {
	defer func() {
		if v := recover(); v != nil {
			a.metrics.processed.WithLabelValues(d.Event, "panic").Inc()
			err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		}
	}()
	return a.handleFn(ctx, d)
}

// retryAfter is how long to wait after a failed attempt: what GitHub's
// rate limits ask for, else the backoff.
func (a *App) retryAfter(err error, attempts int) time.Duration {
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		return max(time.Until(rl.Rate.Reset.Time)+time.Second, time.Second)
	}
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) {
		if abuse.RetryAfter != nil {
			return max(*abuse.RetryAfter, time.Second)
		}
		return time.Minute
	}
	// go-github v62 does not map 429 to a rate-limit error.
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusTooManyRequests {
		if s, err := strconv.Atoi(er.Response.Header.Get("Retry-After")); err == nil {
			return max(time.Duration(s)*time.Second, time.Second)
		}
		return time.Minute
	}
	return a.cfg.Backoff(attempts)
}
