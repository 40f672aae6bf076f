package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

var (
	_ evaluation.VersionStore    = (*Store)(nil)
	_ evaluation.AttemptStore    = (*Store)(nil)
	_ evaluation.ChallengeStore  = (*Store)(nil)
	_ evaluation.ResultStore     = (*Store)(nil)
	_ evaluation.RevocationStore = (*Store)(nil)
	_ evaluation.PresentedStore  = (*Store)(nil)
)

const registrationColumns = `r.id, r.agent_id, r.evaluation_id, r.version_id, v.version, r.status, r.registered_at, r.started_at, r.completed_at, r.deadline_at`
const registrationFrom = ` FROM registrations r JOIN sip_versions v ON v.id = r.version_id`
const openStatuses = `('registered', 'in_progress', 'awaiting_grading')`

func scanRegistration(row pgx.Row) (*evaluation.Registration, error) {
	return scanRegistrationWith(row)
}

// scanRegistrationWith scans a registration followed by extra columns.
func scanRegistrationWith(row pgx.Row, extra ...any) (*evaluation.Registration, error) {
	var r evaluation.Registration
	var status string
	var started, completed, deadline *time.Time
	if err := row.Scan(append([]any{&r.ID, &r.AgentID, &r.EvaluationID, &r.VersionID, &r.Version, &status, &r.RegisteredAt, &started, &completed, &deadline}, extra...)...); err != nil {
		return nil, err
	}
	r.Status = evaluation.RegistrationStatus(status)
	r.RegisteredAt = r.RegisteredAt.UTC()
	if started != nil {
		r.StartedAt = started.UTC()
	}
	if completed != nil {
		r.CompletedAt = completed.UTC()
	}
	if deadline != nil {
		r.Deadline = deadline.UTC()
	}
	return &r, nil
}

// Register opens a registration, or returns the open one.
func (s *Store) Register(ctx context.Context, r *evaluation.Registration) (_ *evaluation.Registration, created bool, err error) {
	defer wrap(&err, "Register")
	// One round trip: the new registration, or the open one that the
	// insert ran into. One that a concurrent transaction committed after
	// this statement's snapshot is not visible to it: then it is read.
	out, err := scanRegistrationWith(s.pool.QueryRow(ctx, `WITH ins AS (
			INSERT INTO registrations (id, agent_id, evaluation_id, version_id, status, registered_at)
			VALUES ($1, $2, $3, $4, 'registered', $5)
			ON CONFLICT (agent_id, evaluation_id) WHERE status IN `+openStatuses+` DO NOTHING
			RETURNING *)
		SELECT `+registrationColumns+`, true FROM ins r JOIN sip_versions v ON v.id = r.version_id
		UNION ALL
		SELECT `+registrationColumns+`, false`+registrationFrom+`
			WHERE r.agent_id = $2 AND r.evaluation_id = $3 AND r.status IN `+openStatuses+` AND NOT EXISTS (SELECT 1 FROM ins)`,
		r.ID, r.AgentID, r.EvaluationID, r.VersionID, r.RegisteredAt), &created)
	if errors.Is(err, pgx.ErrNoRows) {
		out, err = s.OpenRegistration(ctx, r.AgentID, r.EvaluationID)
		return out, false, err
	}
	return out, created, err
}

// OpenRegistration returns the agent's open registration for an evaluation.
func (s *Store) OpenRegistration(ctx context.Context, agentID, evaluationID string) (_ *evaluation.Registration, err error) {
	defer wrap(&err, "OpenRegistration")
	return scanRegistration(s.pool.QueryRow(ctx, "SELECT "+registrationColumns+registrationFrom+
		" WHERE r.agent_id = $1 AND r.evaluation_id = $2 AND r.status IN "+openStatuses, agentID, evaluationID))
}

// Registration returns a registration.
func (s *Store) Registration(ctx context.Context, id string) (_ *evaluation.Registration, err error) {
	defer wrap(&err, "Registration")
	return scanRegistration(s.pool.QueryRow(ctx, "SELECT "+registrationColumns+registrationFrom+" WHERE r.id = $1", id))
}

// VersionContent returns the SIP file of a version row.
func (s *Store) VersionContent(ctx context.Context, versionID int64) (_ []byte, err error) {
	defer wrap(&err, "VersionContent")
	var b []byte
	err = s.pool.QueryRow(ctx, "SELECT content FROM sip_versions WHERE id = $1", versionID).Scan(&b)
	return b, err
}

// OpenRegistrations lists an agent's open registrations.
func (s *Store) OpenRegistrations(ctx context.Context, agentID string) (_ []*evaluation.Registration, err error) {
	defer wrap(&err, "OpenRegistrations")
	rows, err := s.pool.Query(ctx, "SELECT "+registrationColumns+registrationFrom+
		" WHERE r.agent_id = $1 AND r.status IN "+openStatuses, agentID)
	return collect(rows, err, scanRegistration)
}

// StartAttempt moves a registration to in_progress; the first start sets
// its start and deadline.
func (s *Store) StartAttempt(ctx context.Context, id string, at, deadline time.Time) (_ *evaluation.Registration, err error) {
	defer wrap(&err, "StartAttempt(%q)", id)
	var dl *time.Time
	if !deadline.IsZero() {
		dl = &deadline
	}
	out, err := scanRegistration(s.pool.QueryRow(ctx, `WITH up AS (
			UPDATE registrations SET status = 'in_progress', started_at = COALESCE(started_at, $2),
				deadline_at = CASE WHEN started_at IS NULL THEN $3 ELSE deadline_at END
			WHERE id = $1 AND status IN ('registered', 'in_progress') RETURNING *)
		SELECT `+registrationColumns+` FROM up r JOIN sip_versions v ON v.id = r.version_id`, id, at, dl))
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err := s.Registration(ctx, id); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("registration is not registered or in progress: %w", registry.ErrConflict)
	}
	return out, err
}

// OverdueRegistrations lists in-progress registrations past their deadline.
func (s *Store) OverdueRegistrations(ctx context.Context, now time.Time, limit int) (_ []*evaluation.Registration, err error) {
	defer wrap(&err, "OverdueRegistrations")
	rows, err := s.pool.Query(ctx, "SELECT "+registrationColumns+registrationFrom+
		" WHERE r.status = 'in_progress' AND r.deadline_at <= $1 ORDER BY r.deadline_at, r.id LIMIT $2", now, limit)
	return collect(rows, err, scanRegistration)
}

// MoveRegistration changes a registration's status if it is in one of from.
func (s *Store) MoveRegistration(ctx context.Context, id string, from []evaluation.RegistrationStatus, to evaluation.RegistrationStatus, at time.Time) (_ *evaluation.Registration, err error) {
	defer wrap(&err, "MoveRegistration(%q → %s)", id, to)
	froms := make([]string, len(from))
	for i, f := range from {
		froms[i] = string(f)
	}
	set := "status = $1"
	args := []any{string(to), id, froms}
	switch to {
	case evaluation.RegInProgress:
		set += ", started_at = COALESCE(started_at, $4)"
		args = append(args, at)
	case evaluation.RegCompleted, evaluation.RegCancelled:
		set += ", completed_at = $4"
		args = append(args, at)
	}
	tag, err := s.pool.Exec(ctx, "UPDATE registrations SET "+set+" WHERE id = $2 AND status = ANY($3)", args...)
	if err != nil {
		return nil, err
	}
	row := func() (*evaluation.Registration, error) {
		return scanRegistration(s.pool.QueryRow(ctx, "SELECT "+registrationColumns+registrationFrom+" WHERE r.id = $1", id))
	}
	if tag.RowsAffected() != 1 {
		if _, err := row(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("registration is not %v: %w", from, registry.ErrConflict)
	}
	return row()
}

// RecordResult stores a registration's result and completes it.
func (s *Store) RecordResult(ctx context.Context, r *evaluation.Result, points float64) (_ *evaluation.Result, err error) {
	defer wrap(&err, "RecordResult")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	out, err := recordResult(ctx, tx, r, points)
	if err != nil {
		return nil, err
	}
	return out, tx.Commit(ctx)
}

// recordResult inserts a result, crediting points for the agent's first
// pass of the evaluation, and completes the registration. The
// registration row is locked first, so concurrent submissions queue and
// the later ones find it completed.
func recordResult(ctx context.Context, tx pgx.Tx, r *evaluation.Result, points float64) (*evaluation.Result, error) {
	var status string
	if err := tx.QueryRow(ctx, "SELECT status FROM registrations WHERE id = $1 FOR UPDATE", r.RegistrationID).Scan(&status); err != nil {
		return nil, err
	}
	if !evaluation.RegistrationStatus(status).Open() {
		return nil, fmt.Errorf("registration is %s: %w", status, registry.ErrConflict)
	}
	out := *r
	out.PointsEarned = 0
	if r.Passed && points > 0 {
		var credited bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM results WHERE agent_id = $1 AND evaluation_id = $2 AND points_earned > 0)",
			r.AgentID, r.EvaluationID).Scan(&credited); err != nil {
			return nil, err
		}
		if !credited {
			out.PointsEarned = points
		}
	}
	details, err := json.Marshal(orEmpty(out.Details))
	if err != nil {
		return nil, err
	}
	trace, err := json.Marshal(out.Trace)
	if err != nil {
		return nil, err
	}
	var expires *time.Time
	if !out.ExpiresAt.IsZero() {
		expires = &out.ExpiresAt
	}
	if _, err := tx.Exec(ctx, `INSERT INTO results (id, registration_id, agent_id, evaluation_id, version_id, version, content_sha256,
		passed, score, max_score, points_earned, details, trace, completed_at, expires_at, outcome)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		out.ID, out.RegistrationID, out.AgentID, out.EvaluationID, out.VersionID, out.Version, out.ContentSHA256, out.Passed,
		out.Score, out.MaxScore, out.PointsEarned, details, trace, out.CompletedAt, expires, string(out.EndedAs())); err != nil {
		return nil, err
	}
	// The registration ends; a job still waiting for the submission will
	// never get it.
	if _, err := tx.Exec(ctx, `WITH reg AS (UPDATE registrations SET status = $3, completed_at = $1 WHERE id = $2)
		UPDATE jobs SET status = 'expired', updated_at = $1 WHERE registration_id = $2 AND status = 'pending'`,
		out.CompletedAt, out.RegistrationID, string(evaluation.EndedStatus(out.EndedAs()))); err != nil {
		return nil, err
	}
	return &out, nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

const resultColumns = `r.id, r.registration_id, r.agent_id, r.evaluation_id, r.version_id, r.version, r.content_sha256, r.passed,
	r.score, r.max_score, r.points_earned, r.details, r.trace, r.completed_at, r.expires_at, r.outcome, r.revoked_at, r.revoked_reason, r.provenance`

func scanResult(row pgx.Row) (*evaluation.Result, error) {
	var r evaluation.Result
	var details, trace []byte
	var expires, revoked *time.Time
	if err := row.Scan(&r.ID, &r.RegistrationID, &r.AgentID, &r.EvaluationID, &r.VersionID, &r.Version, &r.ContentSHA256, &r.Passed,
		&r.Score, &r.MaxScore, &r.PointsEarned, &details, &trace, &r.CompletedAt, &expires, &r.Outcome, &revoked, &r.RevokedReason, &r.Provenance); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(details, &r.Details); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(trace, &r.Trace); err != nil {
		return nil, err
	}
	r.CompletedAt = r.CompletedAt.UTC()
	if expires != nil {
		r.ExpiresAt = expires.UTC()
	}
	if revoked != nil {
		r.RevokedAt = revoked.UTC()
	}
	return &r, nil
}

// Result returns a result.
func (s *Store) Result(ctx context.Context, id string) (_ *evaluation.Result, err error) {
	defer wrap(&err, "Result")
	return scanResult(s.pool.QueryRow(ctx, "SELECT "+resultColumns+" FROM results r WHERE r.id = $1", id))
}

// Results lists results, newest first, with the next page's cursor.
func (s *Store) Results(ctx context.Context, f evaluation.ResultFilter) (_ []*evaluation.Result, next string, err error) {
	defer wrap(&err, "Results")
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	where := []string{"(a.results_public OR r.agent_id = " + arg(f.Viewer) + ")"}
	if f.EvaluationID != "" {
		where = append(where, "r.evaluation_id = "+arg(f.EvaluationID))
	}
	if f.AgentID != "" {
		where = append(where, "r.agent_id = "+arg(f.AgentID))
	}
	if f.Version != "" {
		where = append(where, "r.version = "+arg(f.Version))
	}
	if f.PassedOnly {
		where = append(where, "r.passed AND r.revoked_at IS NULL")
	}
	if f.Provenance != "" {
		where = append(where, "r.provenance = "+arg(string(f.Provenance)))
	}
	if f.Cursor != "" {
		at, id, err := registry.DecodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		where = append(where, "(r.completed_at, r.id) < ("+arg(at)+", "+arg(id)+")")
	}
	limit := registry.PageSize(f.Limit)
	rows, err := s.pool.Query(ctx, "SELECT "+resultColumns+" FROM results r JOIN agents a ON a.id = r.agent_id WHERE "+
		strings.Join(where, " AND ")+" ORDER BY r.completed_at DESC, r.id DESC LIMIT "+arg(limit+1), args...)
	out, err := collect(rows, err, scanResult)
	if err != nil {
		return nil, "", err
	}
	out, next = evaluation.PageResults(out, limit)
	return out, next, nil
}

// Passes lists the agent's newest valid pass of each evaluation.
func (s *Store) Passes(ctx context.Context, agentID string, now time.Time) (_ []*evaluation.Result, err error) {
	defer wrap(&err, "Passes")
	rows, err := s.pool.Query(ctx, "SELECT "+resultColumns+` FROM (
			SELECT DISTINCT ON (evaluation_id) * FROM results
			WHERE agent_id = $1 AND passed AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)
			ORDER BY evaluation_id, completed_at DESC, id DESC) r
		ORDER BY r.completed_at DESC, r.id DESC`, agentID, now)
	return collect(rows, err, scanResult)
}

// ResultsSince lists results completed at or after since, oldest first.
func (s *Store) ResultsSince(ctx context.Context, since time.Time) (_ []*evaluation.Result, err error) {
	defer wrap(&err, "ResultsSince")
	rows, err := s.pool.Query(ctx, "SELECT "+resultColumns+" FROM results r WHERE r.completed_at >= $1 ORDER BY r.completed_at, r.id", since)
	return collect(rows, err, scanResult)
}

// AgentPoints sums the points credited to an agent.
func (s *Store) AgentPoints(ctx context.Context, agentID string) (_ float64, err error) {
	defer wrap(&err, "AgentPoints")
	var p float64
	err = s.pool.QueryRow(ctx, "SELECT COALESCE(SUM(points_earned), 0) FROM results WHERE agent_id = $1 AND revoked_at IS NULL", agentID).Scan(&p)
	return p, err
}

// PassCounts counts the agents that passed each evaluation.
func (s *Store) PassCounts(ctx context.Context) (_ map[string]int, err error) {
	defer wrap(&err, "PassCounts")
	rows, err := s.pool.Query(ctx, `SELECT r.evaluation_id, COUNT(DISTINCT r.agent_id) FROM results r JOIN agents a ON a.id = r.agent_id
		WHERE r.passed AND r.revoked_at IS NULL AND r.provenance IN ('graded', 'imported') AND a.results_public GROUP BY r.evaluation_id`)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	var id string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil })
	return out, err
}
