package evaluation

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/sipregistry/sip/registry"
)

// RegistrationStatus is where an agent's attempt at an evaluation stands.
type RegistrationStatus string

// Registration statuses. registered, in_progress and awaiting_grading are
// open: an agent holds at most one open registration per evaluation.
const (
	RegRegistered      RegistrationStatus = "registered"
	RegInProgress      RegistrationStatus = "in_progress"
	RegAwaitingGrading RegistrationStatus = "awaiting_grading"
	RegCompleted       RegistrationStatus = "completed"
	RegCancelled       RegistrationStatus = "cancelled"
)

// Open reports whether the registration still awaits a result.
func (s RegistrationStatus) Open() bool {
	return s == RegRegistered || s == RegInProgress || s == RegAwaitingGrading
}

// Registration is an agent's attempt at one evaluation, pinned to the
// version of the SIP it registered under.
type Registration struct {
	ID           string
	AgentID      string
	EvaluationID string
	VersionID    int64
	Version      string
	Status       RegistrationStatus
	RegisteredAt time.Time
	StartedAt    time.Time
	CompletedAt  time.Time
	// Deadline is when a started attempt must have been answered (its
	// challenge, time limit or nonce); zero when it has none. Past it, the
	// sweeper ends the attempt as expired.
	Deadline time.Time
}

// Overdue reports whether the registration is a started attempt whose
// deadline passed at now.
func (r *Registration) Overdue(now time.Time) bool {
	return r.Status == RegInProgress && !r.Deadline.IsZero() && !now.Before(r.Deadline)
}

// Challenge is a Proof of Agentic Work challenge. It lives in the database
// so any replica can serve and check it.
type Challenge struct {
	ID             string
	RegistrationID string
	AgentID        string
	Values         []int
	Nonce          string
	CreatedAt      time.Time
	ExpiresAt      time.Time
	UsedAt         time.Time
	// VersionID is the SIP version its registration pinned (set by
	// StartChallenge).
	VersionID int64
}

// Result is the outcome of one graded attempt. It names the version of
// the SIP the registration was made under, and keeps its execution record.
type Result struct {
	ID             string
	RegistrationID string
	AgentID        string
	EvaluationID   string
	VersionID      int64
	Version        string
	ContentSHA256  string
	Passed         bool
	Score          *float64
	MaxScore       *float64
	PointsEarned   float64
	// Outcome is how the attempt ended; Passed is Outcome == passed.
	Outcome     Outcome
	Details     map[string]any
	CompletedAt time.Time
	// ExpiresAt is when a pass stops counting (config.valid_days); zero
	// means never.
	ExpiresAt time.Time
	Trace     Trace
	// RevokedAt, when set, is when the result was revoked (by the
	// registry's maintainers, or by its agent): it no longer counts as a
	// pass, and its credential is marked revoked in the status list.
	RevokedAt     time.Time
	RevokedReason string
	// Provenance is where the result comes from ("" is graded).
	Provenance Provenance
}

// Standing is an agent in the directory: its points and the evaluations
// it holds a pass of.
type Standing struct {
	AgentID, Name, Description string
	Claimed                    bool
	Points                     float64
	Passes                     int
}

// ExternalCredential is a credential another registry issued to an agent,
// verified when it was presented.
type ExternalCredential struct {
	AgentID     string
	Issuer      string // did:web:…
	Achievement string // the achievement's id (its evaluation page)
	Subject     string // the agent's page on the issuing registry
	Credential  []byte // the credential as presented (JSON)
	ValidUntil  time.Time
	RecordedAt  time.Time
}

// EndedAs is the result's outcome (passed or failed for a result stored
// without one).
func (r *Result) EndedAs() Outcome {
	switch {
	case r.Outcome != "":
		return r.Outcome
	case r.Passed:
		return OutcomePassed
	}
	return OutcomeFailed
}

// EndedStatus is the status a registration ends in with an outcome.
func EndedStatus(o Outcome) RegistrationStatus {
	if o == OutcomeCancelled {
		return RegCancelled
	}
	return RegCompleted
}

// Valid reports whether r is a pass that still counts at now.
func (r *Result) Valid(now time.Time) bool {
	return r.Passed && (r.ExpiresAt.IsZero() || now.Before(r.ExpiresAt))
}

// digested is a trace input recorded only as a digest keyed with the
// server's record key: a third party cannot test guesses against it (an
// unkeyed hash of a short answer is recovered by trying them all), while
// the server can still tell whether a given submission is the one graded.
type digested struct{ v any }

// digest marks v to be recorded as a keyed digest.
func digest(v any) digested { return digested{v} }

// digestInput is v's keyed digest: HMAC-SHA-256 of its JSON.
func digestInput(key []byte, v any) string {
	var b []byte
	if s, ok := v.(string); ok && plainJSONString(s) {
		b = make([]byte, 0, len(s)+2)
		b = append(append(append(b, '"'), s...), '"') // what json.Marshal makes of s
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			return ""
		}
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// plainJSONString reports whether json.Marshal writes s as itself between
// quotes: printable ASCII with nothing it escapes (quote, backslash, and
// <, >, & for HTML).
func plainJSONString(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// ResultFilter selects results. Cursor continues a previous page.
type ResultFilter struct {
	EvaluationID string
	AgentID      string
	Version      string
	// Viewer is the agent asking (""): results of agents who keep them
	// private are shown only to themselves.
	Viewer string
	// PassedOnly keeps passes only.
	PassedOnly bool
	// Provenance keeps results of that provenance only ("" keeps all).
	Provenance Provenance
	Limit      int
	Cursor     string
}

// The stores of registrations, challenges and results, split by the
// part of the service that calls them; both stores implement every one
// (registrytest runs one suite on both), and cmd/sip hands the same store
// to each field of Config.

// AttemptStore keeps registrations and their results: what registering,
// starting, cancelling and ending an attempt call (the runners, the
// attempt limits, the listing, the sweeper and the judge worker).
type AttemptStore interface {
	// RegisterWithin opens a registration, or returns the agent's open
	// one for the evaluation (created false), under an attempt limit:
	// when the agent has no open registration, it counts the attempts as
	// Attempts does and opens one only if limit.Allows it at
	// r.RegisteredAt, in one transaction that concurrent registrations of
	// the same agent (or owner) and evaluation wait for, on every
	// replica. Concurrent calls open one. Returns a *LimitReached when the
	// limit refuses.
	RegisterWithin(ctx context.Context, r *Registration, limit AttemptLimit) (_ *Registration, created bool, err error)
	// Attempts counts the attempts at an evaluation that count against
	// limit: the registrations of the agent (of every agent of
	// limit.Owner when set) except those given back before they started
	// and those whose result's outcome limit does not count.
	Attempts(ctx context.Context, agentID, evaluationID string, limit AttemptLimit) (AttemptCount, error)
	// OpenRegistration returns the agent's open registration for an
	// evaluation. Returns registry.ErrNotFound.
	OpenRegistration(ctx context.Context, agentID, evaluationID string) (*Registration, error)
	// Registration returns a registration. Returns registry.ErrNotFound.
	Registration(ctx context.Context, id string) (*Registration, error)
	// OpenRegistrations lists an agent's open registrations.
	OpenRegistrations(ctx context.Context, agentID string) ([]*Registration, error)
	// StartAttempt moves a registered or in-progress registration to
	// in_progress. Its first start sets started_at to at and, unless
	// deadline is zero, its deadline; starting again changes neither.
	// Returns registry.ErrConflict when it is in another status.
	StartAttempt(ctx context.Context, id string, at, deadline time.Time) (*Registration, error)
	// OverdueRegistrations lists up to limit in-progress registrations
	// whose deadline is at or before now, oldest deadline first.
	OverdueRegistrations(ctx context.Context, now time.Time, limit int) ([]*Registration, error)
	// MoveRegistration changes the status of a registration that is in
	// one of from. Returns registry.ErrConflict when it is not.
	MoveRegistration(ctx context.Context, id string, from []RegistrationStatus, to RegistrationStatus, at time.Time) (*Registration, error)
	// RecordResult stores the result of a registration and ends it
	// (cancelled for the cancelled outcome, else completed), and expires
	// its job if that still awaits a submission, in one transaction.
	// points is credited only if the agent has never been credited for
	// the evaluation. Returns registry.ErrConflict when the registration
	// already has a result or is not open.
	RecordResult(ctx context.Context, r *Result, points float64) (*Result, error)
	// Passes lists the agent's newest pass of each evaluation that has not
	// expired at now.
	Passes(ctx context.Context, agentID string, now time.Time) ([]*Result, error)
}

// ChallengeStore keeps the challenges of Proof of Agentic Work: what its
// runner calls.
type ChallengeStore interface {
	// OpenRegistrationChallenge returns the agent's open registration for
	// an evaluation and the challenge with that id (nil when there is
	// none), in one query: what answering a challenge reads. Returns
	// registry.ErrNotFound when there is no open registration.
	OpenRegistrationChallenge(ctx context.Context, agentID, evaluationID, challengeID string) (*Registration, *Challenge, error)
	// Challenge returns a challenge. Returns registry.ErrNotFound.
	Challenge(ctx context.Context, id string) (*Challenge, error)
	// StartChallenge starts c.AgentID's open registration for an
	// evaluation with a challenge: it returns the registration's unused,
	// unexpired challenge (as of c.CreatedAt) if it has one; otherwise it
	// stores c for that registration (whatever c.RegistrationID says) and
	// moves the registration to in_progress, in one transaction, and
	// reports created; the registration's deadline becomes the new
	// challenge's expiry. Returns registry.ErrNotFound when the agent has no open
	// registration, registry.ErrGone when it is past its deadline (as of
	// c.CreatedAt: its challenge expired unanswered, so the attempt is
	// over and takes no new one), and registry.ErrConflict when it cannot
	// be started.
	StartChallenge(ctx context.Context, evaluationID string, c *Challenge) (_ *Challenge, created bool, _ error)
	// SetChallengeExpiry changes when an unused challenge expires, and its
	// registration's deadline with it.
	SetChallengeExpiry(ctx context.Context, id string, expires time.Time) error
	// AnswerChallenge marks a challenge used and records the result of its
	// registration, in one transaction. Returns registry.ErrGone when the challenge
	// was used already, and registry.ErrConflict as RecordResult does.
	AnswerChallenge(ctx context.Context, challengeID string, r *Result, points float64) (*Result, error)
}

// ResultStore reads results as the service shows them: one, a page of a
// listing, an agent's points, pass counts and the standings.
type ResultStore interface {
	// Result returns a result. Returns registry.ErrNotFound.
	Result(ctx context.Context, id string) (*Result, error)
	// Results lists results, newest first, and the cursor of the next page.
	Results(ctx context.Context, f ResultFilter) ([]*Result, string, error)
	// AgentPoints sums the points credited to an agent.
	AgentPoints(ctx context.Context, agentID string) (float64, error)
	// PassCounts counts, for each evaluation id, the agents that passed it
	// at least once.
	PassCounts(ctx context.Context) (map[string]int, error)
	// Standings lists the agents whose results are public, by points
	// (revoked results left out), then passes, then name, from offset,
	// at most limit; and how many there are in all.
	Standings(ctx context.Context, offset, limit int) ([]Standing, int, error)
}

// RevocationStore keeps what the registry's own credentials need: each
// result's index in the revocation status list, and revocations.
type RevocationStore interface {
	// CredentialIndex is the index of a result's credential in the
	// revocation status list: given on first use, the same ever after,
	// distinct for every result. Returns registry.ErrNotFound.
	CredentialIndex(ctx context.Context, resultID string) (int64, error)
	// RevokeResult revokes a result (idempotent: the first reason and
	// time stay). A revoked result is no pass (Passes, points, pass
	// counts) and its credential's status bit is set. Returns
	// registry.ErrNotFound.
	RevokeResult(ctx context.Context, resultID, reason string, at time.Time) error
	// RevokedIndexes lists the status-list indexes in [from, to) of the
	// credentials of revoked results, ascending.
	RevokedIndexes(ctx context.Context, from, to int64) ([]int64, error)
}

// PresentedStore keeps the credentials of other registries that agents
// presented: what presenting one and credential prerequisites call.
type PresentedStore interface {
	// PutExternalCredential records a verified credential of another
	// registry, replacing the agent's earlier one of the same issuer and
	// achievement. Its subject is then the agent's for good: a subject
	// another agent holds is registry.ErrConflict.
	PutExternalCredential(ctx context.Context, c *ExternalCredential) error
	// ExternalCredentials lists an agent's recorded external credentials.
	ExternalCredentials(ctx context.Context, agentID string) ([]*ExternalCredential, error)
}

// PageResults trims a listing fetched with limit+1 rows to limit and returns
// the cursor for the next page, or "" when there is none. Stores fetch one
// row more than they show so they know whether another page exists.
func PageResults(rs []*Result, limit int) ([]*Result, string) {
	if len(rs) <= limit {
		return rs, ""
	}
	rs = rs[:limit]
	last := rs[limit-1]
	return rs, registry.EncodeCursor(last.CompletedAt, last.ID)
}
