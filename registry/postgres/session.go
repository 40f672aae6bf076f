package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

var (
	_ evaluation.SessionStore = (*Store)(nil)
	_ evaluation.MessageStore = (*Store)(nil)
	_ evaluation.ProctorStore = (*Store)(nil)
	_ evaluation.SeatStore    = (*Store)(nil)
)

const sessionColumns = `s.id, s.evaluation_id, s.kind, s.status, s.registration_id, s.proctor_id, s.min_participants, s.max_participants,
	s.participants, s.last_sequence, s.created_at, s.started_at, s.ends_at, s.ended_at, s.version_id`

func scanSession(row pgx.Row, extra ...any) (*evaluation.Session, error) {
	var s evaluation.Session
	var kind, status string
	var reg, proctor *string
	var started, ends, ended *time.Time
	var version *int64
	dest := append([]any{&s.ID, &s.EvaluationID, &kind, &status, &reg, &proctor, &s.MinParticipants, &s.MaxParticipants,
		&s.Participants, &s.LastSequence, &s.CreatedAt, &started, &ends, &ended, &version}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	if version != nil {
		s.VersionID = *version
	}
	s.Kind, s.Status = evaluation.SessionKind(kind), evaluation.SessionStatus(status)
	if reg != nil {
		s.RegistrationID = *reg
	}
	if proctor != nil {
		s.ProctorID = *proctor
	}
	s.CreatedAt = s.CreatedAt.UTC()
	for _, t := range []struct {
		dst *time.Time
		src *time.Time
	}{{&s.StartedAt, started}, {&s.EndsAt, ends}, {&s.EndedAt, ended}} {
		if t.src != nil {
			*t.dst = t.src.UTC()
		}
	}
	return &s, nil
}

func (s *Store) sessionTx(ctx context.Context, tx pgx.Tx, id string) (*evaluation.Session, error) {
	return scanSession(tx.QueryRow(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = $1", id))
}

// notify wakes the streams of a session on every replica when tx commits.
func (s *Store) notify(ctx context.Context, tx pgx.Tx, sessionID string) error {
	_, err := tx.Exec(ctx, "SELECT pg_notify($1, current_schema() || '/' || $2 || '/' || $3)", notifyChannel, s.instance, sessionID)
	return err
}

// ClaimRegistration opens a proctored session; the unique registration
// makes a second claim fail.
func (s *Store) ClaimRegistration(ctx context.Context, sess *evaluation.Session, proctorID, candidateID string) (_ *evaluation.Session, err error) {
	defer wrap(&err, "ClaimRegistration")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO sessions (id, evaluation_id, kind, status, registration_id, proctor_id, min_participants,
		max_participants, participants, created_at, started_at, ends_at, version_id) VALUES ($1, $2, 'proctored', 'active', $3, $4, 1, 1, 1, $5, $5, $6, $7)`,
		sess.ID, sess.EvaluationID, sess.RegistrationID, proctorID, sess.CreatedAt, nullTime(sess.EndsAt), sess.VersionID); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO session_participants (session_id, agent_id, role, registration_id, joined_at)
		VALUES ($1, $2, 'proctor', NULL, $5), ($1, $3, 'candidate', $4, $5)`, sess.ID, proctorID, candidateID, sess.RegistrationID, sess.CreatedAt); err != nil {
		return nil, err
	}
	out, err := s.sessionTx(ctx, tx, sess.ID)
	if err != nil {
		return nil, err
	}
	return out, tx.Commit(ctx)
}

// ClaimSession makes proctorID the grader of a live session.
func (s *Store) ClaimSession(ctx context.Context, sessionID, proctorID string, at time.Time, check *evaluation.SeatCheck) (_ *evaluation.Session, err error) {
	defer wrap(&err, "ClaimSession")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	// Joins wait for the claim, and the claim for joins under way: the
	// seats checked are the seats graded.
	if err := lockLive(ctx, tx, sessionID); err != nil {
		return nil, err
	}
	tag, err := tx.Exec(ctx, `UPDATE sessions SET proctor_id = $2 WHERE id = $1 AND kind = 'live_class_work' AND proctor_id IS NULL
		AND status <> 'forming'`, sessionID, proctorID)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		if _, err := s.sessionTx(ctx, tx, sessionID); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("session %s is claimed or not started: %w", sessionID, registry.ErrConflict)
	}
	if err := checkSeats(ctx, tx, sessionID, check); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO session_participants (session_id, agent_id, role, joined_at) VALUES ($1, $2, 'proctor', $3)`,
		sessionID, proctorID, at); err != nil {
		return nil, err
	}
	out, err := s.sessionTx(ctx, tx, sessionID)
	if err != nil {
		return nil, err
	}
	return out, tx.Commit(ctx)
}

// JoinLive seats a registration in a live session, first come first
// served. Joins of one evaluation queue on an advisory lock, so two never
// take one seat.
func (s *Store) JoinLive(ctx context.Context, tmpl *evaluation.Session, reg *evaluation.Registration, duration time.Duration, at time.Time) (_ *evaluation.Session, err error) {
	defer wrap(&err, "JoinLive")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('sip-live:' || current_schema() || ':' || $1, 0))", tmpl.EvaluationID); err != nil {
		return nil, err
	}
	seated, err := scanSession(tx.QueryRow(ctx, "SELECT "+sessionColumns+` FROM sessions s
		JOIN session_participants p ON p.session_id = s.id WHERE p.registration_id = $1`, reg.ID))
	if err == nil {
		return seated, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	var id string
	err = tx.QueryRow(ctx, `SELECT id FROM sessions WHERE evaluation_id = $1 AND version_id = $3 AND kind = 'live_class_work'
		AND status IN ('forming', 'active') AND participants < max_participants AND (ends_at IS NULL OR ends_at > $2)
		AND NOT EXISTS (SELECT 1 FROM session_participants p JOIN agents a ON a.id = p.agent_id
			WHERE p.session_id = sessions.id AND a.owner <> '' AND lower(a.owner) = (SELECT lower(owner) FROM agents WHERE id = $4))
		ORDER BY created_at, id LIMIT 1`, tmpl.EvaluationID, at, reg.VersionID, reg.AgentID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		id = tmpl.ID
		_, err = tx.Exec(ctx, `INSERT INTO sessions (id, evaluation_id, kind, status, min_participants, max_participants, created_at, version_id)
			VALUES ($1, $2, 'live_class_work', 'forming', $3, $4, $5, $6)`, id, tmpl.EvaluationID, tmpl.MinParticipants, tmpl.MaxParticipants, at, reg.VersionID)
	}
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO session_participants (session_id, agent_id, role, registration_id, joined_at)
		VALUES ($1, $2, 'participant', $3, $4)`, id, reg.AgentID, reg.ID, at); err != nil {
		return nil, err
	}
	var ends *time.Time
	if duration > 0 {
		e := at.Add(duration)
		ends = &e
	}
	if _, err := tx.Exec(ctx, `UPDATE sessions SET participants = participants + 1,
		status = CASE WHEN status = 'forming' AND participants + 1 >= min_participants THEN 'active' ELSE status END,
		started_at = CASE WHEN status = 'forming' AND participants + 1 >= min_participants THEN $2 ELSE started_at END,
		ends_at = CASE WHEN status = 'forming' AND participants + 1 >= min_participants THEN $3 ELSE ends_at END
		WHERE id = $1`, id, at, ends); err != nil {
		return nil, err
	}
	out, err := s.sessionTx(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if err := s.notify(ctx, tx, id); err != nil { // the session may have started: its streams say so
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	s.broker.Publish(id, nil)
	return out, nil
}

// LeaveForming takes a registration out of a forming session.
func (s *Store) LeaveForming(ctx context.Context, registrationID string) (err error) {
	defer wrap(&err, "LeaveForming")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var id, status, evaluationID string
	err = tx.QueryRow(ctx, `SELECT s.id, s.status, s.evaluation_id FROM sessions s JOIN session_participants p ON p.session_id = s.id
		WHERE p.registration_id = $1`, registrationID).Scan(&id, &status, &evaluationID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('sip-live:' || current_schema() || ':' || $1, 0))", evaluationID); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, "SELECT status FROM sessions WHERE id = $1", id).Scan(&status); err != nil {
		return err
	}
	if status != string(evaluation.SessionForming) {
		return fmt.Errorf("session %s has started: %w", id, registry.ErrConflict)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM session_participants WHERE registration_id = $1", registrationID); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "UPDATE sessions SET participants = participants - 1 WHERE id = $1", id); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Session returns a session.
func (s *Store) Session(ctx context.Context, id string) (_ *evaluation.Session, err error) {
	defer wrap(&err, "Session")
	return scanSession(s.pool.QueryRow(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = $1", id))
}

// SessionByRegistration returns the session a registration takes part in.
func (s *Store) SessionByRegistration(ctx context.Context, registrationID string) (_ *evaluation.Session, err error) {
	defer wrap(&err, "SessionByRegistration")
	return scanSession(s.pool.QueryRow(ctx, "SELECT "+sessionColumns+` FROM sessions s
		JOIN session_participants p ON p.session_id = s.id WHERE p.registration_id = $1`, registrationID))
}

// Membership returns a session and the role agentID has in it ("" when
// none), in one query.
func (s *Store) Membership(ctx context.Context, sessionID, agentID string) (_ *evaluation.Session, role string, err error) {
	defer wrap(&err, "Membership")
	var r *string
	sess, err := scanSession(s.pool.QueryRow(ctx, "SELECT "+sessionColumns+`, p.role FROM sessions s
		LEFT JOIN session_participants p ON p.session_id = s.id AND p.agent_id = $1 WHERE s.id = $2`, agentID, sessionID), &r)
	if r != nil {
		role = *r
	}
	return sess, role, err
}

// Participants lists a session's participants with their names.
func (s *Store) Participants(ctx context.Context, sessionID string) (_ []evaluation.Participant, err error) {
	defer wrap(&err, "Participants")
	rows, err := s.pool.Query(ctx, `SELECT p.session_id, p.agent_id, a.name, p.role, COALESCE(p.registration_id, ''), p.joined_at
		FROM session_participants p JOIN agents a ON a.id = p.agent_id WHERE p.session_id = $1 ORDER BY p.joined_at, p.agent_id`, sessionID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (evaluation.Participant, error) {
		var p evaluation.Participant
		err := row.Scan(&p.SessionID, &p.AgentID, &p.Name, &p.Role, &p.RegistrationID, &p.JoinedAt)
		p.JoinedAt = p.JoinedAt.UTC()
		return p, err
	})
}

// AgentSessions lists an agent's sessions with its role in each.
func (s *Store) AgentSessions(ctx context.Context, agentID string) (_ []*evaluation.Session, _ []string, err error) {
	defer wrap(&err, "AgentSessions")
	rows, err := s.pool.Query(ctx, "SELECT "+sessionColumns+`, p.role FROM sessions s JOIN session_participants p ON p.session_id = s.id
		WHERE p.agent_id = $1 ORDER BY s.created_at DESC, s.id DESC LIMIT 200`, agentID)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var sessions []*evaluation.Session
	var roles []string
	for rows.Next() {
		var role string
		sess, err := scanSession(rows, &role)
		if err != nil {
			return nil, nil, err
		}
		sessions, roles = append(sessions, sess), append(roles, role)
	}
	return sessions, roles, rows.Err()
}

// PendingRegistrations lists started proctored registrations with no
// session.
func (s *Store) PendingRegistrations(ctx context.Context, evaluationID, exclude string, status evaluation.RegistrationStatus) (_ []evaluation.PendingRegistration, err error) {
	defer wrap(&err, "PendingRegistrations")
	rows, err := s.pool.Query(ctx, `SELECT r.id, r.agent_id, a.name, COALESCE(r.started_at, r.registered_at) FROM registrations r
		JOIN agents a ON a.id = r.agent_id
		WHERE r.evaluation_id = $1 AND r.status = $3 AND r.agent_id <> $2
		  AND NOT EXISTS (SELECT 1 FROM session_participants p WHERE p.registration_id = r.id)
		ORDER BY 4, r.id LIMIT 100`, evaluationID, exclude, string(status))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (evaluation.PendingRegistration, error) {
		var p evaluation.PendingRegistration
		err := row.Scan(&p.RegistrationID, &p.CandidateID, &p.CandidateName, &p.WaitingSince)
		p.WaitingSince = p.WaitingSince.UTC()
		return p, err
	})
}

// UngradedSessions lists started live sessions with no proctor.
func (s *Store) UngradedSessions(ctx context.Context, evaluationID, exclude string) (_ []*evaluation.Session, err error) {
	defer wrap(&err, "UngradedSessions")
	rows, err := s.pool.Query(ctx, "SELECT "+sessionColumns+` FROM sessions s WHERE s.evaluation_id = $1 AND s.kind = 'live_class_work'
		AND s.status <> 'forming' AND s.proctor_id IS NULL
		AND NOT EXISTS (SELECT 1 FROM session_participants p WHERE p.session_id = s.id AND p.agent_id = $2)
		ORDER BY s.started_at, s.id LIMIT 100`, evaluationID, exclude)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*evaluation.Session, error) { return scanSession(row) })
}

// PostMessage numbers and appends a message in one statement: the
// session row's counter, updated under its row lock, gives the sequence.
// Other replicas hear of it from a batched NOTIFY (one NOTIFY per message
// would serialise every commit on PostgreSQL's notification queue lock:
// 2,000 posts a second instead of 6,500 here).
func (s *Store) PostMessage(ctx context.Context, m *evaluation.SessionMessage) (_ *evaluation.SessionMessage, err error) {
	defer wrap(&err, "PostMessage")
	out := *m
	err = s.pool.QueryRow(ctx, `WITH seq AS (
			UPDATE sessions SET last_sequence = last_sequence + 1
			WHERE id = $1 AND status = 'active' AND (ends_at IS NULL OR ends_at > $2) RETURNING last_sequence),
		ins AS (
			INSERT INTO session_messages (id, session_id, sequence, sender_id, role, content, created_at)
			SELECT $3, $1, last_sequence, $4, $5, $6, $2 FROM seq RETURNING sequence)
		SELECT sequence FROM ins`,
		m.SessionID, m.CreatedAt, m.ID, m.SenderID, m.Role, m.Content).Scan(&out.Sequence)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("session %s is not open: %w", m.SessionID, registry.ErrConflict)
	}
	if err != nil {
		return nil, err
	}
	s.broker.Publish(m.SessionID, &out) // this replica's streams get it at once
	s.notifyLater(m.SessionID)          // other replicas', shortly
	return &out, nil
}

// Messages lists messages after since, in order.
func (s *Store) Messages(ctx context.Context, sessionID string, since int64, limit int) (_ []*evaluation.SessionMessage, err error) {
	defer wrap(&err, "Messages")
	rows, err := s.pool.Query(ctx, `SELECT id, session_id, sequence, sender_id, role, content, created_at FROM session_messages
		WHERE session_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3`, sessionID, since, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*evaluation.SessionMessage, error) {
		var m evaluation.SessionMessage
		err := row.Scan(&m.ID, &m.SessionID, &m.Sequence, &m.SenderID, &m.Role, &m.Content, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		return &m, err
	})
}

// GradeSession ends a session and records its results at once.
func (s *Store) GradeSession(ctx context.Context, sessionID, proctorID string, results []*evaluation.Result, points float64, at time.Time, check *evaluation.SeatCheck) (_ []*evaluation.Result, err error) {
	defer wrap(&err, "GradeSession")
	return s.endSession(ctx, sessionID, `UPDATE sessions SET status = 'ended', ended_at = $2, started_at = COALESCE(started_at, $2)
		WHERE id = $1 AND proctor_id = $3 AND status <> 'ended'`, []any{sessionID, at, proctorID},
		"is not this proctor's to grade, or was graded", results, points, check)
}

// endSession ends a session with one conditional UPDATE (end, whose $1 is
// the session and $2 the time) and records its results, in one
// transaction, then wakes its streams on every replica. It returns
// ErrConflict, saying why, when the UPDATE matched nothing.
func (s *Store) endSession(ctx context.Context, sessionID, end string, args []any, why string, results []*evaluation.Result, points float64, check *evaluation.SeatCheck) ([]*evaluation.Result, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	if check != nil {
		if err := lockLive(ctx, tx, sessionID); err != nil {
			return nil, err
		}
	}
	tag, err := tx.Exec(ctx, end, args...)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		return nil, fmt.Errorf("session %s %s: %w", sessionID, why, registry.ErrConflict)
	}
	if err := checkSeats(ctx, tx, sessionID, check); err != nil {
		return nil, err
	}
	out := make([]*evaluation.Result, 0, len(results))
	for _, r := range results {
		saved, err := recordResult(ctx, tx, r, points)
		if err != nil {
			return nil, err
		}
		out = append(out, saved)
	}
	if err := s.notify(ctx, tx, sessionID); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	s.broker.Publish(sessionID, nil)
	return out, nil
}

// OverdueSessions lists active sessions that ended at or before before.
func (s *Store) OverdueSessions(ctx context.Context, before time.Time, limit int) (_ []*evaluation.Session, err error) {
	defer wrap(&err, "OverdueSessions")
	rows, err := s.pool.Query(ctx, "SELECT "+sessionColumns+` FROM sessions s WHERE s.status = 'active' AND s.ends_at <= $1
		ORDER BY s.ends_at, s.id LIMIT $2`, before, limit)
	return collect(rows, err, func(row pgx.Row) (*evaluation.Session, error) { return scanSession(row) })
}

// EndSession ends an ungraded session and records its participants'
// results at once.
func (s *Store) EndSession(ctx context.Context, sessionID string, results []*evaluation.Result, at time.Time) (_ []*evaluation.Result, err error) {
	defer wrap(&err, "EndSession")
	return s.endSession(ctx, sessionID, `UPDATE sessions SET status = 'ended', ended_at = $2 WHERE id = $1 AND status = 'active'`,
		[]any{sessionID, at}, "is not active", results, 0, nil)
}

// GradeJob ends a session, records the proctor's result of a judging job
// and completes the job at once.
func (s *Store) GradeJob(ctx context.Context, sessionID, proctorID, jobID string, r *evaluation.Result, points float64, at time.Time, check *evaluation.SeatCheck) (_ *evaluation.Result, err error) {
	defer wrap(&err, "GradeJob")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	tag, err := tx.Exec(ctx, `UPDATE sessions SET status = 'ended', ended_at = $3 WHERE id = $1 AND proctor_id = $2 AND status <> 'ended'`,
		sessionID, proctorID, at)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		return nil, fmt.Errorf("session %s is not this proctor's to grade, or was graded: %w", sessionID, registry.ErrConflict)
	}
	if err := checkSeats(ctx, tx, sessionID, check); err != nil {
		return nil, err
	}
	saved, err := recordResult(ctx, tx, r, points)
	if err != nil {
		return nil, err
	}
	tag, err = tx.Exec(ctx, `UPDATE jobs SET status = 'completed', result_id = $2, lease_until = NULL, updated_at = $3
		WHERE id = $1 AND status IN ('submitted', 'judging')`, jobID, saved.ID, at)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		return nil, fmt.Errorf("job %s is not waiting for a grade: %w", jobID, registry.ErrConflict)
	}
	if err := s.notify(ctx, tx, sessionID); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	s.broker.Publish(sessionID, nil)
	return saved, nil
}
