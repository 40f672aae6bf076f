// Package stats turns results into the figures the registry shows: per
// evaluation (attempts, pass rate, score distribution, time to pass, per
// version, over time, leaderboards) and for the whole registry (the
// success metrics of the design: adoption, completion, pass rate,
// contributions and module diversity).
//
// Stores supply facts (Source); everything counted is counted here, once,
// so both stores agree by construction. Service keeps the figures until
// what they count changes; cmd/sip builds it over the store and hands it
// to the pages and /metrics.
package stats

import (
	"context"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
)

// Fact is one result as statistics count it. Revoked results are not
// facts: they no longer count.
type Fact struct {
	ResultID string
	AgentID  string
	Version  string
	Outcome  evaluation.Outcome
	// Score and MaxScore, when Scored; results of evaluations without a
	// score (PoAW, proctored work) have none.
	Score, MaxScore float64
	Scored          bool
	// RegisteredAt is when the attempt's registration was made,
	// CompletedAt when it ended.
	RegisteredAt, CompletedAt time.Time
	// Provenance is where the result comes from ("" is graded).
	Provenance evaluation.Provenance
}

// Mark identifies the facts of an evaluation as of now: it changes
// whenever a result is recorded or revoked, so figures computed from the
// facts can be kept until it does.
type Mark struct {
	Results, Revoked int
}

// Totals are the registry-wide counts the success metrics are made of.
type Totals struct {
	// Agents registered with the registry, and how many of them made at
	// least one registration for an evaluation.
	Agents, AgentsRegistered int
	// Registrations by status (registered, in_progress, awaiting_grading,
	// completed, cancelled).
	Registrations map[evaluation.RegistrationStatus]int
	// Outcomes counts results that were not revoked, by outcome.
	Outcomes map[evaluation.Outcome]int
	// FirstSynced is when each SIP's first version was recorded: when it
	// was merged, as far as the registry knows.
	FirstSynced map[string]time.Time
}

// Source is what statistics read from a store.
type Source interface {
	// Facts lists an evaluation's results that were not revoked, oldest
	// first.
	Facts(ctx context.Context, evaluationID string) ([]Fact, error)
	// Mark returns the evaluation's mark: cheap, from indexes.
	Mark(ctx context.Context, evaluationID string) (Mark, error)
	// Totals counts across the registry.
	Totals(ctx context.Context) (Totals, error)
}

// graded reports whether an outcome is a grade of the agent's work:
// passed, failed, or expired (the time ran out on the agent). Cancelled
// attempts, attempts nobody graded and judge failures are not.
func graded(o evaluation.Outcome) bool {
	return o == evaluation.OutcomePassed || o == evaluation.OutcomeFailed || o == evaluation.OutcomeExpired
}

// Rate is a share: N of Of.
type Rate struct {
	N, Of int
}

// Percent is the share in percent, 0 when Of is 0.
func (r Rate) Percent() float64 {
	if r.Of == 0 {
		return 0
	}
	return 100 * float64(r.N) / float64(r.Of)
}

// Known reports whether the share has a denominator.
func (r Rate) Known() bool { return r.Of > 0 }
