package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

var (
	_ evaluation.JobStore     = (*Store)(nil)
	_ evaluation.JudgingStore = (*Store)(nil)
)

const jobColumns = `id, registration_id, agent_id, evaluation_id, status, nonce, nonce_expires_at, submission, partial, attempts,
	next_attempt_at, lease_until, last_error, result_id, created_at, updated_at`

func scanJob(row pgx.Row) (*evaluation.Job, error) {
	var j evaluation.Job
	var status string
	var nonceExp, next, lease *time.Time
	var result *string
	if err := row.Scan(&j.ID, &j.RegistrationID, &j.AgentID, &j.EvaluationID, &status, &j.Nonce, &nonceExp, &j.Submission, &j.Partial,
		&j.Attempts, &next, &lease, &j.LastError, &result, &j.CreatedAt, &j.UpdatedAt); err != nil {
		return nil, err
	}
	j.Status = evaluation.JobStatus(status)
	if result != nil {
		j.ResultID = *result
	}
	for _, t := range []struct {
		dst *time.Time
		src *time.Time
	}{{&j.NonceExpiresAt, nonceExp}, {&j.NextAttempt, next}, {&j.LeaseUntil, lease}} {
		if t.src != nil {
			*t.dst = t.src.UTC()
		}
	}
	j.CreatedAt, j.UpdatedAt = j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	return &j, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// CreateJob stores a job, or returns the registration's existing one.
func (s *Store) CreateJob(ctx context.Context, j *evaluation.Job) (_ *evaluation.Job, created bool, err error) {
	defer wrap(&err, "CreateJob")
	tag, err := s.pool.Exec(ctx, `INSERT INTO jobs (id, registration_id, agent_id, evaluation_id, status, nonce, nonce_expires_at,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (registration_id) DO NOTHING`,
		j.ID, j.RegistrationID, j.AgentID, j.EvaluationID, string(j.Status), j.Nonce, nullTime(j.NonceExpiresAt), j.CreatedAt)
	if err != nil {
		return nil, false, err
	}
	got, err := scanJob(s.pool.QueryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE registration_id = $1", j.RegistrationID))
	return got, tag.RowsAffected() == 1, err
}

// Job returns a job.
func (s *Store) Job(ctx context.Context, id string) (_ *evaluation.Job, err error) {
	defer wrap(&err, "Job")
	return scanJob(s.pool.QueryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = $1", id))
}

// JobByRegistration returns a registration's job.
func (s *Store) JobByRegistration(ctx context.Context, registrationID string) (_ *evaluation.Job, err error) {
	defer wrap(&err, "JobByRegistration")
	return scanJob(s.pool.QueryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE registration_id = $1", registrationID))
}

type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// moveJob updates a job that is in status from ($1 id, $2 status; set
// uses $3…), or reports ErrConflict.
func (s *Store) moveJob(ctx context.Context, db execer, id string, from evaluation.JobStatus, set string, args ...any) error {
	tag, err := db.Exec(ctx, "UPDATE jobs SET "+set+" WHERE id = $1 AND status = $2", append([]any{id, string(from)}, args...)...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		if _, err := s.Job(ctx, id); err != nil {
			return err
		}
		return fmt.Errorf("job is not %s: %w", from, registry.ErrConflict)
	}
	return nil
}

// SubmitJob stores a pending job's submission and queues it.
func (s *Store) SubmitJob(ctx context.Context, id string, submission, partial []byte, at time.Time) (_ *evaluation.Job, err error) {
	defer wrap(&err, "SubmitJob")
	if err := s.moveJob(ctx, s.pool, id, evaluation.JobPending, "status = 'submitted', submission = $3, partial = $4, next_attempt_at = $5, updated_at = $5",
		submission, partial, at); err != nil {
		return nil, err
	}
	return s.Job(ctx, id)
}

// ExpireJob marks a pending job expired.
func (s *Store) ExpireJob(ctx context.Context, id string, at time.Time) (err error) {
	defer wrap(&err, "ExpireJob")
	return s.moveJob(ctx, s.pool, id, evaluation.JobPending, "status = 'expired', updated_at = $3", at)
}

// ClaimJob leases the next due job; replicas skip each other's locks.
func (s *Store) ClaimJob(ctx context.Context, now, lease time.Time) (_ *evaluation.Job, err error) {
	defer wrap(&err, "ClaimJob")
	return scanJob(s.pool.QueryRow(ctx, `UPDATE jobs SET status = 'judging', lease_until = $1, attempts = attempts + 1, updated_at = $2
		WHERE id = (SELECT id FROM jobs WHERE (status = 'submitted' AND next_attempt_at <= $2) OR (status = 'judging' AND lease_until <= $2)
			ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING `+jobColumns, lease, now))
}

// RetryJob returns a judging job to the queue.
func (s *Store) RetryJob(ctx context.Context, id string, next time.Time, reason string) (err error) {
	defer wrap(&err, "RetryJob")
	return s.moveJob(ctx, s.pool, id, evaluation.JobJudging, "status = 'submitted', next_attempt_at = $3, lease_until = NULL, last_error = $4, updated_at = now()",
		next, reason)
}

// FailJob ends a job for good and records its registration's result.
func (s *Store) FailJob(ctx context.Context, id string, reason string, r *evaluation.Result) (err error) {
	defer wrap(&err, "FailJob")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := recordResult(ctx, tx, r, 0); err != nil {
		return err
	}
	if err := s.moveJob(ctx, tx, id, evaluation.JobJudging, "status = 'failed', last_error = $3, lease_until = NULL, updated_at = $4, result_id = $5",
		reason, r.CompletedAt, r.ID); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// ExtendJobLease moves a judging job's lease.
func (s *Store) ExtendJobLease(ctx context.Context, id string, until time.Time) (err error) {
	defer wrap(&err, "ExtendJobLease")
	return s.moveJob(ctx, s.pool, id, evaluation.JobJudging, "lease_until = $3", until)
}

// CompleteJob records a judged job's result and completes it.
func (s *Store) CompleteJob(ctx context.Context, id string, r *evaluation.Result, points float64) (_ *evaluation.Result, err error) {
	defer wrap(&err, "CompleteJob")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	out, err := recordResult(ctx, tx, r, points)
	if err != nil {
		return nil, err
	}
	if err := s.moveJob(ctx, tx, id, evaluation.JobJudging, "status = 'completed', result_id = $3, lease_until = NULL, updated_at = $4",
		out.ID, out.CompletedAt); err != nil {
		return nil, err
	}
	return out, tx.Commit(ctx)
}

// JobStats counts the queue's jobs.
func (s *Store) JobStats(ctx context.Context) (_ evaluation.JobStats, err error) {
	defer wrap(&err, "JobStats")
	var st evaluation.JobStats
	var oldest *time.Time
	err = s.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'submitted'), count(*) FILTER (WHERE status = 'judging'),
		count(*) FILTER (WHERE status = 'failed'), min(updated_at) FILTER (WHERE status = 'submitted')
		FROM jobs WHERE status IN ('submitted', 'judging', 'failed')`).Scan(&st.Waiting, &st.Judging, &st.Failed, &oldest)
	if oldest != nil {
		st.OldestWaiting = oldest.UTC()
	}
	return st, err
}
