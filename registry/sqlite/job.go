package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

var (
	_ evaluation.JobStore     = (*Store)(nil)
	_ evaluation.JudgingStore = (*Store)(nil)
)

const jobColumns = `id, registration_id, agent_id, evaluation_id, status, nonce, nonce_expires_at, submission, partial, attempts,
	next_attempt_at, lease_until, last_error, result_id, created_at, updated_at`

func scanJob(row scanner) (*evaluation.Job, error) {
	var j evaluation.Job
	var status, created, updated string
	var nonceExp, next, lease, result sql.NullString
	if err := row.Scan(&j.ID, &j.RegistrationID, &j.AgentID, &j.EvaluationID, &status, &j.Nonce, &nonceExp, &j.Submission, &j.Partial,
		&j.Attempts, &next, &lease, &j.LastError, &result, &created, &updated); err != nil {
		return nil, err
	}
	j.Status, j.ResultID = evaluation.JobStatus(status), result.String
	for _, t := range []struct {
		dst *time.Time
		src string
	}{{&j.NonceExpiresAt, nonceExp.String}, {&j.NextAttempt, next.String}, {&j.LeaseUntil, lease.String}, {&j.CreatedAt, created}, {&j.UpdatedAt, updated}} {
		v, err := parseTime(t.src)
		if err != nil {
			return nil, err
		}
		*t.dst = v
	}
	return &j, nil
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

// CreateJob stores a job, or returns the registration's existing one.
func (s *Store) CreateJob(ctx context.Context, j *evaluation.Job) (_ *evaluation.Job, created bool, err error) {
	defer wrap(&err, "CreateJob")
	res, err := s.exec(ctx, `INSERT INTO jobs (id, registration_id, agent_id, evaluation_id, status, nonce, nonce_expires_at,
		created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (registration_id) DO NOTHING`,
		j.ID, j.RegistrationID, j.AgentID, j.EvaluationID, string(j.Status), j.Nonce, nullTime(j.NonceExpiresAt),
		formatTime(j.CreatedAt), formatTime(j.CreatedAt))
	if err != nil {
		return nil, false, err
	}
	n, _ := res.RowsAffected()
	got, err := scanJob(s.queryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE registration_id = ?", j.RegistrationID))
	return got, n == 1, err
}

// Job returns a job.
func (s *Store) Job(ctx context.Context, id string) (_ *evaluation.Job, err error) {
	defer wrap(&err, "Job")
	return scanJob(s.queryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ?", id))
}

// JobByRegistration returns a registration's job.
func (s *Store) JobByRegistration(ctx context.Context, registrationID string) (_ *evaluation.Job, err error) {
	defer wrap(&err, "JobByRegistration")
	return scanJob(s.queryRow(ctx, "SELECT "+jobColumns+" FROM jobs WHERE registration_id = ?", registrationID))
}

// moveJob updates a job that is in status from, or reports ErrConflict.
func (s *Store) moveJob(ctx context.Context, db execer, id string, from evaluation.JobStatus, set string, args ...any) error {
	res, err := db.ExecContext(ctx, "UPDATE jobs SET "+set+" WHERE id = ? AND status = ?", append(args, id, string(from))...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		if _, err := s.Job(ctx, id); err != nil {
			return err
		}
		return fmt.Errorf("job is not %s: %w", from, registry.ErrConflict)
	}
	return nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// SubmitJob stores a pending job's submission and queues it.
func (s *Store) SubmitJob(ctx context.Context, id string, submission, partial []byte, at time.Time) (_ *evaluation.Job, err error) {
	defer wrap(&err, "SubmitJob")
	if err := s.moveJob(ctx, locked{s}, id, evaluation.JobPending, "status = 'submitted', submission = ?, partial = ?, next_attempt_at = ?, updated_at = ?",
		submission, partial, formatTime(at), formatTime(at)); err != nil {
		return nil, err
	}
	return s.Job(ctx, id)
}

// ExpireJob marks a pending job expired.
func (s *Store) ExpireJob(ctx context.Context, id string, at time.Time) (err error) {
	defer wrap(&err, "ExpireJob")
	return s.moveJob(ctx, locked{s}, id, evaluation.JobPending, "status = 'expired', updated_at = ?", formatTime(at))
}

// ClaimJob leases the next due job.
func (s *Store) ClaimJob(ctx context.Context, now, lease time.Time) (_ *evaluation.Job, err error) {
	defer wrap(&err, "ClaimJob")
	n := formatTime(now)
	row, unlock := s.writeRow(ctx, `UPDATE jobs SET status = 'judging', lease_until = ?, attempts = attempts + 1, updated_at = ?
		WHERE id = (SELECT id FROM jobs WHERE (status = 'submitted' AND next_attempt_at <= ?) OR (status = 'judging' AND lease_until <= ?)
			ORDER BY next_attempt_at, id LIMIT 1)
		RETURNING `+jobColumns, formatTime(lease), n, n, n)
	defer unlock()
	return scanJob(row)
}

// RetryJob returns a judging job to the queue.
func (s *Store) RetryJob(ctx context.Context, id string, next time.Time, reason string) (err error) {
	defer wrap(&err, "RetryJob")
	return s.moveJob(ctx, locked{s}, id, evaluation.JobJudging, "status = 'submitted', next_attempt_at = ?, lease_until = NULL, last_error = ?, updated_at = ?",
		formatTime(next), reason, formatTime(time.Now()))
}

// FailJob ends a job for good and records its registration's result.
func (s *Store) FailJob(ctx context.Context, id string, reason string, r *evaluation.Result) (err error) {
	defer wrap(&err, "FailJob")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.recordResult(ctx, tx, r, 0); err != nil {
		return err
	}
	if err := s.moveJob(ctx, tx, id, evaluation.JobJudging, "status = 'failed', last_error = ?, lease_until = NULL, updated_at = ?, result_id = ?",
		reason, formatTime(r.CompletedAt), r.ID); err != nil {
		return err
	}
	return tx.Commit()
}

// ExtendJobLease moves a judging job's lease.
func (s *Store) ExtendJobLease(ctx context.Context, id string, until time.Time) (err error) {
	defer wrap(&err, "ExtendJobLease")
	return s.moveJob(ctx, locked{s}, id, evaluation.JobJudging, "lease_until = ?", formatTime(until))
}

// CompleteJob records a judged job's result and completes it.
func (s *Store) CompleteJob(ctx context.Context, id string, r *evaluation.Result, points float64) (_ *evaluation.Result, err error) {
	defer wrap(&err, "CompleteJob")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := s.recordResult(ctx, tx, r, points)
	if err != nil {
		return nil, err
	}
	if err := s.moveJob(ctx, tx, id, evaluation.JobJudging, "status = 'completed', result_id = ?, lease_until = NULL, updated_at = ?",
		out.ID, formatTime(out.CompletedAt)); err != nil {
		return nil, err
	}
	return out, tx.Commit()
}

// JobStats counts the queue's jobs.
func (s *Store) JobStats(ctx context.Context) (_ evaluation.JobStats, err error) {
	defer wrap(&err, "JobStats")
	var st evaluation.JobStats
	var oldest sql.NullString
	err = s.queryRow(ctx, `SELECT COALESCE(SUM(status = 'submitted'), 0), COALESCE(SUM(status = 'judging'), 0), COALESCE(SUM(status = 'failed'), 0),
		MIN(CASE WHEN status = 'submitted' THEN updated_at END) FROM jobs WHERE status IN ('submitted', 'judging', 'failed')`).
		Scan(&st.Waiting, &st.Judging, &st.Failed, &oldest)
	if err != nil {
		return st, err
	}
	st.OldestWaiting, err = parseTime(oldest.String)
	return st, err
}
