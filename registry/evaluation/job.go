package evaluation

import (
	"context"
	"time"
)

// JobStatus is where a judging job stands.
type JobStatus string

// Job statuses: pending (started, awaiting the agent's submission),
// submitted (awaiting the judge), judging (a worker holds it), completed
// (a result was recorded), failed (the judge never answered usably),
// expired (the agent answered too late).
const (
	JobPending   JobStatus = "pending"
	JobSubmitted JobStatus = "submitted"
	JobJudging   JobStatus = "judging"
	JobCompleted JobStatus = "completed"
	JobFailed    JobStatus = "failed"
	JobExpired   JobStatus = "expired"
)

// Job is the durable record of an attempt that a judge grades: a
// certification, or a benchmark with free-response questions. Workers on
// any replica take submitted jobs; a job whose worker died is taken again
// when its lease runs out.
type Job struct {
	ID             string
	RegistrationID string
	AgentID        string
	EvaluationID   string
	Status         JobStatus
	// Nonce binds a certification submission to its start; it expires.
	Nonce          string
	NonceExpiresAt time.Time
	// Submission is the agent's answers as JSON; Partial holds what the
	// server graded itself (multiple-choice points).
	Submission  []byte
	Partial     []byte
	Attempts    int
	NextAttempt time.Time
	LeaseUntil  time.Time
	LastError   string
	ResultID    string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// JobStats is the judging queue at a glance, for /metrics.
type JobStats struct {
	// Waiting jobs are submitted and wait for a worker; Judging jobs are
	// leased to one; Failed jobs ended without a grade.
	Waiting, Judging, Failed int
	// OldestWaiting is when the longest-waiting job was queued (or last
	// put back after a failed attempt); zero when none waits.
	OldestWaiting time.Time
}

// JobStore keeps judging jobs as the runners and the reads of jobs see
// them: made at the start of an attempt, given its submission, expired,
// read, counted.
type JobStore interface {
	// JobStats counts the jobs waiting, being judged and failed.
	JobStats(ctx context.Context) (JobStats, error)
	// CreateJob stores a job, or returns the registration's existing one
	// (created false): a registration has one job.
	CreateJob(ctx context.Context, j *Job) (_ *Job, created bool, err error)
	// Job returns a job. Returns registry.ErrNotFound.
	Job(ctx context.Context, id string) (*Job, error)
	// JobByRegistration returns a registration's job. Returns registry.ErrNotFound.
	JobByRegistration(ctx context.Context, registrationID string) (*Job, error)
	// SubmitJob stores the submission of a pending job and queues it for
	// the judge. Returns registry.ErrConflict unless the job is pending.
	SubmitJob(ctx context.Context, id string, submission, partial []byte, at time.Time) (*Job, error)
	// ExpireJob marks a pending job expired. Returns registry.ErrConflict unless
	// it is pending.
	ExpireJob(ctx context.Context, id string, at time.Time) error
}

// JudgingStore is the queue of jobs as the judge worker works it: claimed
// under a lease, retried, failed for good, completed with their result.
type JudgingStore interface {
	// ClaimJob takes the oldest submitted job that is due (or a judging
	// job whose lease ran out), leases it until lease and counts the
	// attempt. Returns registry.ErrNotFound when none is due.
	ClaimJob(ctx context.Context, now, lease time.Time) (*Job, error)
	// RetryJob returns a judging job to the queue, due at next.
	RetryJob(ctx context.Context, id string, next time.Time, reason string) error
	// FailJob ends a judging job for good and records r (an
	// infrastructure_failure) as its registration's result, in one
	// transaction.
	FailJob(ctx context.Context, id string, reason string, r *Result) error
	// ExtendJobLease moves the lease of a job being judged to until.
	// Returns ErrConflict when the job is no longer judging.
	ExtendJobLease(ctx context.Context, id string, until time.Time) error
	// CompleteJob records the result of a judging job and completes it,
	// in one transaction, crediting points as RecordResult does.
	CompleteJob(ctx context.Context, id string, r *Result, points float64) (*Result, error)
}
