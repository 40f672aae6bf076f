package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

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

func scanRegistration(row scanner) (*evaluation.Registration, error) {
	return scanRegistrationWith(row)
}

// scanRegistrationWith scans a registration followed by extra columns.
func scanRegistrationWith(row scanner, extra ...any) (*evaluation.Registration, error) {
	var r evaluation.Registration
	var status, registered string
	var started, completed, deadline sql.NullString
	if err := row.Scan(append([]any{&r.ID, &r.AgentID, &r.EvaluationID, &r.VersionID, &r.Version, &status, &registered, &started, &completed, &deadline}, extra...)...); err != nil {
		return nil, err
	}
	r.Status = evaluation.RegistrationStatus(status)
	var err error
	if r.RegisteredAt, err = parseTime(registered); err != nil {
		return nil, err
	}
	if r.StartedAt, err = parseTime(started.String); err != nil {
		return nil, err
	}
	if r.CompletedAt, err = parseTime(completed.String); err != nil {
		return nil, err
	}
	r.Deadline, err = parseTime(deadline.String)
	return &r, err
}

const openStatuses = `('registered', 'in_progress', 'awaiting_grading')`

// Register opens a registration, or returns the open one.
func (s *Store) Register(ctx context.Context, r *evaluation.Registration) (_ *evaluation.Registration, created bool, err error) {
	defer wrap(&err, "Register")
	res, err := s.exec(ctx, `INSERT INTO registrations (id, agent_id, evaluation_id, version_id, status, registered_at)
		VALUES (?, ?, ?, ?, 'registered', ?)
		ON CONFLICT (agent_id, evaluation_id) WHERE status IN `+openStatuses+` DO NOTHING`,
		r.ID, r.AgentID, r.EvaluationID, r.VersionID, formatTime(r.RegisteredAt))
	if err != nil {
		return nil, false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return nil, false, err
	}
	open, err := s.OpenRegistration(ctx, r.AgentID, r.EvaluationID)
	return open, n == 1, err
}

// OpenRegistration returns the agent's open registration for an evaluation.
func (s *Store) OpenRegistration(ctx context.Context, agentID, evaluationID string) (_ *evaluation.Registration, err error) {
	defer wrap(&err, "OpenRegistration")
	return scanRegistration(s.queryRow(ctx, "SELECT "+registrationColumns+registrationFrom+
		" WHERE r.agent_id = ? AND r.evaluation_id = ? AND r.status IN "+openStatuses, agentID, evaluationID))
}

// Registration returns a registration.
func (s *Store) Registration(ctx context.Context, id string) (_ *evaluation.Registration, err error) {
	defer wrap(&err, "Registration")
	return scanRegistration(s.queryRow(ctx, "SELECT "+registrationColumns+registrationFrom+" WHERE r.id = ?", id))
}

// VersionContent returns the SIP file of a version row.
func (s *Store) VersionContent(ctx context.Context, versionID int64) (_ []byte, err error) {
	defer wrap(&err, "VersionContent")
	var b []byte
	err = s.queryRow(ctx, "SELECT content FROM sip_versions WHERE id = ?", versionID).Scan(&b)
	return b, err
}

// OpenRegistrations lists an agent's open registrations.
func (s *Store) OpenRegistrations(ctx context.Context, agentID string) (_ []*evaluation.Registration, err error) {
	defer wrap(&err, "OpenRegistrations")
	rows, err := s.query(ctx, "SELECT "+registrationColumns+registrationFrom+
		" WHERE r.agent_id = ? AND r.status IN "+openStatuses, agentID)
	return collect(rows, err, scanRegistration)
}

// StartAttempt moves a registration to in_progress; the first start sets
// its start and deadline.
func (s *Store) StartAttempt(ctx context.Context, id string, at, deadline time.Time) (_ *evaluation.Registration, err error) {
	defer wrap(&err, "StartAttempt(%q)", id)
	row, unlock := s.writeRow(ctx, `UPDATE registrations SET status = 'in_progress', started_at = COALESCE(started_at, ?),
		deadline_at = CASE WHEN started_at IS NULL THEN ? ELSE deadline_at END
		WHERE id = ? AND status IN ('registered', 'in_progress') RETURNING id`, formatTime(at), nullTime(deadline), id)
	var got string
	err = row.Scan(&got)
	unlock()
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.Registration(ctx, id); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("registration is not registered or in progress: %w", registry.ErrConflict)
	}
	if err != nil {
		return nil, err
	}
	return s.Registration(ctx, id)
}

// OverdueRegistrations lists in-progress registrations past their deadline.
func (s *Store) OverdueRegistrations(ctx context.Context, now time.Time, limit int) (_ []*evaluation.Registration, err error) {
	defer wrap(&err, "OverdueRegistrations")
	rows, err := s.query(ctx, "SELECT "+registrationColumns+registrationFrom+
		" WHERE r.status = 'in_progress' AND r.deadline_at IS NOT NULL AND r.deadline_at <= ? ORDER BY r.deadline_at, r.id LIMIT ?", formatTime(now), limit)
	return collect(rows, err, scanRegistration)
}

// MoveRegistration changes a registration's status if it is in one of from.
func (s *Store) MoveRegistration(ctx context.Context, id string, from []evaluation.RegistrationStatus, to evaluation.RegistrationStatus, at time.Time) (_ *evaluation.Registration, err error) {
	defer wrap(&err, "MoveRegistration(%q → %s)", id, to)
	args := []any{string(to)}
	set := "status = ?"
	switch to {
	case evaluation.RegInProgress:
		set += ", started_at = COALESCE(started_at, ?)"
		args = append(args, formatTime(at))
	case evaluation.RegCompleted, evaluation.RegCancelled:
		set += ", completed_at = ?"
		args = append(args, formatTime(at))
	}
	args = append(args, id)
	for _, f := range from {
		args = append(args, string(f))
	}
	res, err := s.exec(ctx, "UPDATE registrations SET "+set+" WHERE id = ? AND status IN ("+placeholders(len(from))+")", args...)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		if _, err := scanRegistration(s.queryRow(ctx, "SELECT "+registrationColumns+registrationFrom+" WHERE r.id = ?", id)); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("registration is not %v: %w", from, registry.ErrConflict)
	}
	return scanRegistration(s.queryRow(ctx, "SELECT "+registrationColumns+registrationFrom+" WHERE r.id = ?", id))
}

// RecordResult stores a registration's result and completes it.
func (s *Store) RecordResult(ctx context.Context, r *evaluation.Result, points float64) (_ *evaluation.Result, err error) {
	defer wrap(&err, "RecordResult")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	out, err := s.recordResult(ctx, tx, r, points)
	if err != nil {
		return nil, err
	}
	return out, tx.Commit()
}

// recordResult inserts a result, crediting points for the agent's first
// pass of the evaluation, and completes the registration.
func (s *Store) recordResult(ctx context.Context, tx *sql.Tx, r *evaluation.Result, points float64) (*evaluation.Result, error) {
	var status string
	if err := s.txQueryRow(ctx, tx, "SELECT status FROM registrations WHERE id = ?", r.RegistrationID).Scan(&status); err != nil {
		return nil, err
	}
	if !evaluation.RegistrationStatus(status).Open() {
		return nil, fmt.Errorf("registration is %s: %w", status, registry.ErrConflict)
	}
	out := *r
	out.PointsEarned = 0
	if r.Passed && points > 0 {
		var credited int
		err := s.txQueryRow(ctx, tx, "SELECT count(*) FROM results WHERE agent_id = ? AND evaluation_id = ? AND points_earned > 0",
			r.AgentID, r.EvaluationID).Scan(&credited)
		if err != nil {
			return nil, err
		}
		if credited == 0 {
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
	var expires any
	if !out.ExpiresAt.IsZero() {
		expires = formatTime(out.ExpiresAt)
	}
	if _, err := s.txExec(ctx, tx, `INSERT INTO results (id, registration_id, agent_id, evaluation_id, version_id, version, content_sha256,
		passed, score, max_score, points_earned, details, trace, completed_at, expires_at, outcome)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		out.ID, out.RegistrationID, out.AgentID, out.EvaluationID, out.VersionID, out.Version, out.ContentSHA256, out.Passed,
		out.Score, out.MaxScore, out.PointsEarned, string(details), string(trace), formatTime(out.CompletedAt), expires, string(out.EndedAs())); err != nil {
		return nil, err
	}
	if _, err := s.txExec(ctx, tx, "UPDATE registrations SET status = ?, completed_at = ? WHERE id = ?",
		string(evaluation.EndedStatus(out.EndedAs())), formatTime(out.CompletedAt), out.RegistrationID); err != nil {
		return nil, err
	}
	// A job still waiting for the submission will never get it.
	if _, err := s.txExec(ctx, tx, "UPDATE jobs SET status = 'expired', updated_at = ? WHERE registration_id = ? AND status = 'pending'",
		formatTime(out.CompletedAt), out.RegistrationID); err != nil {
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

func scanResult(row scanner) (*evaluation.Result, error) {
	var r evaluation.Result
	var details, trace, completed, outcome string
	var expires, revoked sql.NullString
	if err := row.Scan(&r.ID, &r.RegistrationID, &r.AgentID, &r.EvaluationID, &r.VersionID, &r.Version, &r.ContentSHA256, &r.Passed,
		&r.Score, &r.MaxScore, &r.PointsEarned, &details, &trace, &completed, &expires, &outcome, &revoked, &r.RevokedReason, &r.Provenance); err != nil {
		return nil, err
	}
	r.Outcome = evaluation.Outcome(outcome)
	if err := json.Unmarshal([]byte(details), &r.Details); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(trace), &r.Trace); err != nil {
		return nil, err
	}
	var err error
	if r.CompletedAt, err = parseTime(completed); err != nil {
		return nil, err
	}
	if r.ExpiresAt, err = parseTime(expires.String); err != nil {
		return nil, err
	}
	r.RevokedAt, err = parseTime(revoked.String)
	return &r, err
}

// Result returns a result.
func (s *Store) Result(ctx context.Context, id string) (_ *evaluation.Result, err error) {
	defer wrap(&err, "Result")
	return scanResult(s.queryRow(ctx, "SELECT "+resultColumns+" FROM results r WHERE r.id = ?", id))
}

// Results lists results, newest first, with the next page's cursor.
func (s *Store) Results(ctx context.Context, f evaluation.ResultFilter) (_ []*evaluation.Result, next string, err error) {
	defer wrap(&err, "Results")
	where := []string{"(a.results_public = 1 OR r.agent_id = ?)"}
	args := []any{f.Viewer}
	if f.EvaluationID != "" {
		where, args = append(where, "r.evaluation_id = ?"), append(args, f.EvaluationID)
	}
	if f.AgentID != "" {
		where, args = append(where, "r.agent_id = ?"), append(args, f.AgentID)
	}
	if f.Version != "" {
		where, args = append(where, "r.version = ?"), append(args, f.Version)
	}
	if f.PassedOnly {
		where = append(where, "r.passed = 1 AND r.revoked_at IS NULL")
	}
	if f.Provenance != "" {
		where, args = append(where, "r.provenance = ?"), append(args, string(f.Provenance))
	}
	if f.Cursor != "" {
		at, id, err := registry.DecodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		where, args = append(where, "(r.completed_at, r.id) < (?, ?)"), append(args, formatTime(at), id)
	}
	limit := registry.PageSize(f.Limit)
	rows, err := s.query(ctx, "SELECT "+resultColumns+" FROM results r JOIN agents a ON a.id = r.agent_id WHERE "+
		strings.Join(where, " AND ")+" ORDER BY r.completed_at DESC, r.id DESC LIMIT ?", append(args, limit+1)...)
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
	rows, err := s.query(ctx, "SELECT "+resultColumns+` FROM results r WHERE r.id IN (
			SELECT (SELECT r2.id FROM results r2 WHERE r2.agent_id = e.agent_id AND r2.evaluation_id = e.evaluation_id AND r2.passed = 1 AND r2.revoked_at IS NULL
				AND (r2.expires_at IS NULL OR r2.expires_at > ?) ORDER BY r2.completed_at DESC, r2.id DESC LIMIT 1)
			FROM (SELECT DISTINCT agent_id, evaluation_id FROM results WHERE agent_id = ? AND passed = 1) e)
		ORDER BY r.completed_at DESC, r.id DESC`, formatTime(now), agentID)
	return collect(rows, err, scanResult)
}

// ResultsSince lists results completed at or after since, oldest first.
func (s *Store) ResultsSince(ctx context.Context, since time.Time) (_ []*evaluation.Result, err error) {
	defer wrap(&err, "ResultsSince")
	rows, err := s.query(ctx, "SELECT "+resultColumns+" FROM results r WHERE r.completed_at >= ? ORDER BY r.completed_at, r.id", formatTime(since))
	return collect(rows, err, scanResult)
}

// AgentPoints sums the points credited to an agent.
func (s *Store) AgentPoints(ctx context.Context, agentID string) (_ float64, err error) {
	defer wrap(&err, "AgentPoints")
	var p float64
	err = s.queryRow(ctx, "SELECT COALESCE(SUM(points_earned), 0) FROM results WHERE agent_id = ? AND revoked_at IS NULL", agentID).Scan(&p)
	return p, err
}

// PassCounts counts the agents that passed each evaluation.
func (s *Store) PassCounts(ctx context.Context) (_ map[string]int, err error) {
	defer wrap(&err, "PassCounts")
	rows, err := s.query(ctx, `SELECT r.evaluation_id, COUNT(DISTINCT r.agent_id) FROM results r JOIN agents a ON a.id = r.agent_id
		WHERE r.passed = 1 AND r.revoked_at IS NULL AND r.provenance IN ('graded', 'imported') AND a.results_public = 1 GROUP BY r.evaluation_id`)
	type count struct {
		id string
		n  int
	}
	counts, err := collect(rows, err, func(row scanner) (count, error) {
		var c count
		return c, row.Scan(&c.id, &c.n)
	})
	out := make(map[string]int, len(counts))
	for _, c := range counts {
		out[c.id] = c.n
	}
	return out, err
}
