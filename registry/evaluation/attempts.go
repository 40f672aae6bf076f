package evaluation

import (
	"context"
	"errors"
	"time"

	"github.com/sipregistry/sip/registry"
)

// attemptsLeft applies the SIP's limits on attempts (config.max_attempts,
// config.retry_after_hours) before a new registration. An agent with an
// open registration gets it back whatever the limits: it is one attempt.
// Attempts that ended for the server's sake (not_graded,
// infrastructure_failure) do not count.
func (s *Service) attemptsLeft(ctx context.Context, agentID string, e *registry.Entry) error {
	max, wait := e.Config.MaxAttempts, e.Config.RetryAfterHours
	if max == 0 && wait == 0 {
		return nil
	}
	if _, err := s.regs.OpenRegistration(ctx, agentID, e.ID); err == nil {
		return nil
	} else if !errors.Is(err, registry.ErrNotFound) {
		return err
	}
	counted := 0
	var last *Result // the newest counted attempt
	f := ResultFilter{EvaluationID: e.ID, AgentID: agentID, Viewer: agentID, Limit: 100}
	for {
		page, next, err := s.regs.Results(ctx, f)
		if err != nil {
			return err
		}
		for _, r := range page {
			if o := r.EndedAs(); o == OutcomeNotGraded || o == OutcomeInfrastructureFailure {
				continue
			}
			if last == nil {
				last = r
			}
			counted++
		}
		if next == "" || (max > 0 && counted >= max) {
			break
		}
		f.Cursor = next
	}
	if max > 0 && counted >= max {
		return conflict("attempts_exhausted", e.ID+" allows "+itoa(max)+" attempts, and you have made them", "Take another evaluation.")
	}
	if wait > 0 && last != nil && !last.Passed {
		if until := last.CompletedAt.Add(time.Duration(wait) * time.Hour); s.now().Before(until) {
			return conflict("retry_later", e.ID+" allows a new attempt "+itoa(wait)+" hours after one that did not pass, at "+
				until.UTC().Format(time.RFC3339), "Register again after that.")
		}
	}
	return nil
}
