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
	_ evaluation.SessionStore = (*Store)(nil)
	_ evaluation.MessageStore = (*Store)(nil)
	_ evaluation.ProctorStore = (*Store)(nil)
	_ evaluation.SeatStore    = (*Store)(nil)
)

const sessionColumns = `s.id, s.evaluation_id, s.kind, s.status, s.registration_id, s.proctor_id, s.min_participants, s.max_participants,
	s.participants, s.last_sequence, s.created_at, s.started_at, s.ends_at, s.ended_at, s.version_id`

func scanSession(row scanner) (*evaluation.Session, error) {
	var s evaluation.Session
	var kind, status, created string
	var reg, proctor, started, ends, ended sql.NullString
	var version sql.NullInt64
	if err := row.Scan(&s.ID, &s.EvaluationID, &kind, &status, &reg, &proctor, &s.MinParticipants, &s.MaxParticipants,
		&s.Participants, &s.LastSequence, &created, &started, &ends, &ended, &version); err != nil {
		return nil, err
	}
	s.VersionID = version.Int64
	s.Kind, s.Status, s.RegistrationID, s.ProctorID = evaluation.SessionKind(kind), evaluation.SessionStatus(status), reg.String, proctor.String
	for _, t := range []struct {
		dst *time.Time
		src string
	}{{&s.CreatedAt, created}, {&s.StartedAt, started.String}, {&s.EndsAt, ends.String}, {&s.EndedAt, ended.String}} {
		v, err := parseTime(t.src)
		if err != nil {
			return nil, err
		}
		*t.dst = v
	}
	return &s, nil
}

// ClaimRegistration opens a proctored session; the unique registration
// makes a second claim fail.
func (s *Store) ClaimRegistration(ctx context.Context, sess *evaluation.Session, proctorID, candidateID string) (_ *evaluation.Session, err error) {
	defer wrap(&err, "ClaimRegistration")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	at := formatTime(sess.CreatedAt)
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, evaluation_id, kind, status, registration_id, proctor_id, min_participants,
		max_participants, participants, created_at, started_at, ends_at, version_id) VALUES (?, ?, 'proctored', 'active', ?, ?, 1, 1, 1, ?, ?, ?, ?)`,
		sess.ID, sess.EvaluationID, sess.RegistrationID, proctorID, at, at, nullTime(sess.EndsAt), sess.VersionID); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO session_participants (session_id, agent_id, role, registration_id, joined_at)
		VALUES (?, ?, 'proctor', NULL, ?), (?, ?, 'candidate', ?, ?)`, sess.ID, proctorID, at, sess.ID, candidateID, sess.RegistrationID, at); err != nil {
		return nil, err
	}
	out, err := scanSession(tx.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = ?", sess.ID))
	if err != nil {
		return nil, err
	}
	return out, tx.Commit()
}

// ClaimSession makes proctorID the grader of a live session.
func (s *Store) ClaimSession(ctx context.Context, sessionID, proctorID string, at time.Time, check *evaluation.SeatCheck) (_ *evaluation.Session, err error) {
	defer wrap(&err, "ClaimSession")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET proctor_id = ? WHERE id = ? AND kind = 'live_class_work' AND proctor_id IS NULL
		AND status <> 'forming'`, proctorID, sessionID)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := scanSession(tx.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = ?", sessionID)); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("session %s is claimed or not started: %w", sessionID, registry.ErrConflict)
	}
	if err := checkSeats(ctx, tx, sessionID, check); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO session_participants (session_id, agent_id, role, joined_at) VALUES (?, ?, 'proctor', ?)`,
		sessionID, proctorID, formatTime(at)); err != nil {
		return nil, err
	}
	out, err := scanSession(tx.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = ?", sessionID))
	if err != nil {
		return nil, err
	}
	return out, tx.Commit()
}

// JoinLive seats a registration in a live session, first come first
// served. Writers are serialised, so two joins never take one seat.
func (s *Store) JoinLive(ctx context.Context, tmpl *evaluation.Session, reg *evaluation.Registration, duration time.Duration, at time.Time) (_ *evaluation.Session, err error) {
	defer wrap(&err, "JoinLive")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	now := formatTime(at)
	seated, err := scanSession(tx.QueryRowContext(ctx, "SELECT "+sessionColumns+` FROM sessions s
		JOIN session_participants p ON p.session_id = s.id WHERE p.registration_id = ?`, reg.ID))
	if err == nil {
		return seated, nil
	}
	if err != sql.ErrNoRows {
		return nil, err
	}
	id := ""
	err = tx.QueryRowContext(ctx, `SELECT id FROM sessions WHERE evaluation_id = ? AND version_id = ? AND kind = 'live_class_work'
		AND status IN ('forming', 'active') AND participants < max_participants AND (ends_at IS NULL OR ends_at > ?)
		AND NOT EXISTS (SELECT 1 FROM session_participants p JOIN agents a ON a.id = p.agent_id
			WHERE p.session_id = sessions.id AND a.owner <> '' AND lower(a.owner) = (SELECT lower(owner) FROM agents WHERE id = ?))
		ORDER BY created_at, id LIMIT 1`, tmpl.EvaluationID, reg.VersionID, now, reg.AgentID).Scan(&id)
	if err == sql.ErrNoRows {
		id = tmpl.ID
		_, err = tx.ExecContext(ctx, `INSERT INTO sessions (id, evaluation_id, kind, status, min_participants, max_participants, created_at, version_id)
			VALUES (?, ?, 'live_class_work', 'forming', ?, ?, ?, ?)`, id, tmpl.EvaluationID, tmpl.MinParticipants, tmpl.MaxParticipants, now, reg.VersionID)
	}
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO session_participants (session_id, agent_id, role, registration_id, joined_at)
		VALUES (?, ?, 'participant', ?, ?)`, id, reg.AgentID, reg.ID, now); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET participants = participants + 1,
		status = CASE WHEN status = 'forming' AND participants + 1 >= min_participants THEN 'active' ELSE status END,
		started_at = CASE WHEN status = 'forming' AND participants + 1 >= min_participants THEN ? ELSE started_at END,
		ends_at = CASE WHEN status = 'forming' AND participants + 1 >= min_participants AND ? > 0 THEN ? ELSE ends_at END
		WHERE id = ?`, now, int64(duration), formatTime(at.Add(duration)), id); err != nil {
		return nil, err
	}
	out, err := scanSession(tx.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = ?", id))
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	s.broker.Publish(id, nil) // the session may have started: its streams say so
	return out, nil
}

// LeaveForming takes a registration out of a forming session.
func (s *Store) LeaveForming(ctx context.Context, registrationID string) (err error) {
	defer wrap(&err, "LeaveForming")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer done()
	var id, status string
	err = tx.QueryRowContext(ctx, `SELECT s.id, s.status FROM sessions s JOIN session_participants p ON p.session_id = s.id
		WHERE p.registration_id = ?`, registrationID).Scan(&id, &status)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	if status != string(evaluation.SessionForming) {
		return fmt.Errorf("session %s has started: %w", id, registry.ErrConflict)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM session_participants WHERE registration_id = ?", registrationID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE sessions SET participants = participants - 1 WHERE id = ?", id); err != nil {
		return err
	}
	return tx.Commit()
}

// Session returns a session.
func (s *Store) Session(ctx context.Context, id string) (_ *evaluation.Session, err error) {
	defer wrap(&err, "Session")
	return scanSession(s.queryRow(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = ?", id))
}

// SessionByRegistration returns the session a registration takes part in.
func (s *Store) SessionByRegistration(ctx context.Context, registrationID string) (_ *evaluation.Session, err error) {
	defer wrap(&err, "SessionByRegistration")
	return scanSession(s.queryRow(ctx, "SELECT "+sessionColumns+` FROM sessions s
		JOIN session_participants p ON p.session_id = s.id WHERE p.registration_id = ?`, registrationID))
}

// Membership returns a session and the role agentID has in it ("" when
// none), in one query.
func (s *Store) Membership(ctx context.Context, sessionID, agentID string) (_ *evaluation.Session, role string, err error) {
	defer wrap(&err, "Membership")
	var r sql.NullString
	sess, err := scanSession(scanFunc(func(dest ...any) error {
		return s.queryRow(ctx, "SELECT "+sessionColumns+`, p.role FROM sessions s
			LEFT JOIN session_participants p ON p.session_id = s.id AND p.agent_id = ? WHERE s.id = ?`, agentID, sessionID).Scan(append(dest, &r)...)
	}))
	return sess, r.String, err
}

// Participants lists a session's participants with their names.
func (s *Store) Participants(ctx context.Context, sessionID string) (_ []evaluation.Participant, err error) {
	defer wrap(&err, "Participants")
	rows, err := s.query(ctx, `SELECT p.session_id, p.agent_id, a.name, p.role, p.registration_id, p.joined_at FROM session_participants p
		JOIN agents a ON a.id = p.agent_id WHERE p.session_id = ? ORDER BY p.joined_at, p.agent_id`, sessionID)
	return collect(rows, err, func(row scanner) (evaluation.Participant, error) {
		var p evaluation.Participant
		var reg sql.NullString
		var joined string
		if err := row.Scan(&p.SessionID, &p.AgentID, &p.Name, &p.Role, &reg, &joined); err != nil {
			return p, err
		}
		p.RegistrationID = reg.String
		p.JoinedAt, err = parseTime(joined)
		return p, err
	})
}

// AgentSessions lists an agent's sessions with its role in each.
func (s *Store) AgentSessions(ctx context.Context, agentID string) (_ []*evaluation.Session, _ []string, err error) {
	defer wrap(&err, "AgentSessions")
	rows, err := s.query(ctx, "SELECT "+sessionColumns+`, p.role FROM sessions s JOIN session_participants p ON p.session_id = s.id
		WHERE p.agent_id = ? ORDER BY s.created_at DESC, s.id DESC LIMIT 200`, agentID)
	type pair struct {
		s    *evaluation.Session
		role string
	}
	pairs, err := collect(rows, err, func(row scanner) (pair, error) {
		var role string
		sess, err := scanSession(scanFunc(func(dest ...any) error { return row.Scan(append(dest, &role)...) }))
		return pair{sess, role}, err
	})
	if err != nil {
		return nil, nil, err
	}
	sessions, roles := make([]*evaluation.Session, len(pairs)), make([]string, len(pairs))
	for i, p := range pairs {
		sessions[i], roles[i] = p.s, p.role
	}
	return sessions, roles, nil
}

// scanFunc adapts a function to the scanner interface.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// PendingRegistrations lists started proctored registrations with no
// session.
func (s *Store) PendingRegistrations(ctx context.Context, evaluationID, exclude string, status evaluation.RegistrationStatus) (_ []evaluation.PendingRegistration, err error) {
	defer wrap(&err, "PendingRegistrations")
	rows, err := s.query(ctx, `SELECT r.id, r.agent_id, a.name, COALESCE(r.started_at, r.registered_at) FROM registrations r
		JOIN agents a ON a.id = r.agent_id
		WHERE r.evaluation_id = ? AND r.status = ? AND r.agent_id <> ?
		  AND NOT EXISTS (SELECT 1 FROM session_participants p WHERE p.registration_id = r.id)
		ORDER BY 4, r.id LIMIT 100`, evaluationID, string(status), exclude)
	return collect(rows, err, func(row scanner) (evaluation.PendingRegistration, error) {
		var p evaluation.PendingRegistration
		var since string
		if err := row.Scan(&p.RegistrationID, &p.CandidateID, &p.CandidateName, &since); err != nil {
			return p, err
		}
		p.WaitingSince, err = parseTime(since)
		return p, err
	})
}

// UngradedSessions lists started live sessions with no proctor.
func (s *Store) UngradedSessions(ctx context.Context, evaluationID, exclude string) (_ []*evaluation.Session, err error) {
	defer wrap(&err, "UngradedSessions")
	rows, err := s.query(ctx, "SELECT "+sessionColumns+` FROM sessions s WHERE s.evaluation_id = ? AND s.kind = 'live_class_work'
		AND s.status <> 'forming' AND s.proctor_id IS NULL
		AND NOT EXISTS (SELECT 1 FROM session_participants p WHERE p.session_id = s.id AND p.agent_id = ?)
		ORDER BY s.started_at, s.id LIMIT 100`, evaluationID, exclude)
	return collect(rows, err, scanSession)
}

// PostMessage numbers and appends a message in one statement: the INSERT
// reads the session's counter and a trigger advances it, all under
// SQLite's single write lock, so there are no gaps or duplicates.
func (s *Store) PostMessage(ctx context.Context, m *evaluation.SessionMessage) (_ *evaluation.SessionMessage, err error) {
	defer wrap(&err, "PostMessage")
	now := formatTime(m.CreatedAt)
	out := *m
	row, unlock := s.writeRow(ctx, `INSERT INTO session_messages (id, session_id, sequence, sender_id, role, content, created_at)
		SELECT ?, id, last_sequence + 1, ?, ?, ?, ? FROM sessions
		WHERE id = ? AND status = 'active' AND (ends_at IS NULL OR ends_at > ?) RETURNING sequence`,
		out.ID, out.SenderID, out.Role, out.Content, now, out.SessionID, now)
	err = row.Scan(&out.Sequence)
	unlock()
	if err == sql.ErrNoRows {
		return nil, fmt.Errorf("session %s is not open: %w", m.SessionID, registry.ErrConflict)
	}
	if err != nil {
		return nil, err
	}
	s.broker.Publish(m.SessionID, &out)
	return &out, nil
}

// Messages lists messages after since, in order.
func (s *Store) Messages(ctx context.Context, sessionID string, since int64, limit int) (_ []*evaluation.SessionMessage, err error) {
	defer wrap(&err, "Messages")
	rows, err := s.query(ctx, `SELECT id, session_id, sequence, sender_id, role, content, created_at FROM session_messages
		WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?`, sessionID, since, limit)
	return collect(rows, err, func(row scanner) (*evaluation.SessionMessage, error) {
		var m evaluation.SessionMessage
		var created string
		if err := row.Scan(&m.ID, &m.SessionID, &m.Sequence, &m.SenderID, &m.Role, &m.Content, &created); err != nil {
			return nil, err
		}
		m.CreatedAt, err = parseTime(created)
		return &m, err
	})
}

// GradeSession ends a session and records its results at once.
func (s *Store) GradeSession(ctx context.Context, sessionID, proctorID string, results []*evaluation.Result, points float64, at time.Time, check *evaluation.SeatCheck) (_ []*evaluation.Result, err error) {
	defer wrap(&err, "GradeSession")
	now := formatTime(at)
	return s.endSession(ctx, sessionID, `UPDATE sessions SET status = 'ended', ended_at = ?, started_at = COALESCE(started_at, ?)
		WHERE id = ? AND proctor_id = ? AND status <> 'ended'`, []any{now, now, sessionID, proctorID},
		"is not this proctor's to grade, or was graded", results, points, check)
}

// endSession ends a session with one conditional UPDATE (end, with args)
// and records its results, in one transaction, then wakes its streams. It
// returns ErrConflict, saying why, when the UPDATE matched nothing.
func (s *Store) endSession(ctx context.Context, sessionID, end string, args []any, why string, results []*evaluation.Result, points float64, check *evaluation.SeatCheck) ([]*evaluation.Result, error) {
	tx, done, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := tx.ExecContext(ctx, end, args...)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, fmt.Errorf("session %s %s: %w", sessionID, why, registry.ErrConflict)
	}
	if err := checkSeats(ctx, tx, sessionID, check); err != nil {
		return nil, err
	}
	out := make([]*evaluation.Result, 0, len(results))
	for _, r := range results {
		saved, err := s.recordResult(ctx, tx, r, points)
		if err != nil {
			return nil, err
		}
		out = append(out, saved)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	s.broker.Publish(sessionID, nil)
	return out, nil
}

// OverdueSessions lists active sessions that ended at or before before.
func (s *Store) OverdueSessions(ctx context.Context, before time.Time, limit int) (_ []*evaluation.Session, err error) {
	defer wrap(&err, "OverdueSessions")
	rows, err := s.query(ctx, "SELECT "+sessionColumns+` FROM sessions s WHERE s.status = 'active' AND s.ends_at IS NOT NULL AND s.ends_at <= ?
		ORDER BY s.ends_at, s.id LIMIT ?`, formatTime(before), limit)
	return collect(rows, err, scanSession)
}

// EndSession ends an ungraded session and records its participants'
// results at once.
func (s *Store) EndSession(ctx context.Context, sessionID string, results []*evaluation.Result, at time.Time) (_ []*evaluation.Result, err error) {
	defer wrap(&err, "EndSession")
	return s.endSession(ctx, sessionID, `UPDATE sessions SET status = 'ended', ended_at = ? WHERE id = ? AND status = 'active'`,
		[]any{formatTime(at), sessionID}, "is not active", results, 0, nil)
}

// Subscribe wakes on messages posted by this process (SQLite is one
// process's database).
func (s *Store) Subscribe(_ context.Context, sessionID string) evaluation.Subscription {
	return s.broker.Subscribe(sessionID)
}

// GradeJob ends a session, records the proctor's result of a judging job
// and completes the job at once.
func (s *Store) GradeJob(ctx context.Context, sessionID, proctorID, jobID string, r *evaluation.Result, points float64, at time.Time, check *evaluation.SeatCheck) (_ *evaluation.Result, err error) {
	defer wrap(&err, "GradeJob")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	now := formatTime(at)
	res, err := tx.ExecContext(ctx, `UPDATE sessions SET status = 'ended', ended_at = ? WHERE id = ? AND proctor_id = ? AND status <> 'ended'`,
		now, sessionID, proctorID)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, fmt.Errorf("session %s is not this proctor's to grade, or was graded: %w", sessionID, registry.ErrConflict)
	}
	if err := checkSeats(ctx, tx, sessionID, check); err != nil {
		return nil, err
	}
	saved, err := s.recordResult(ctx, tx, r, points)
	if err != nil {
		return nil, err
	}
	res, err = tx.ExecContext(ctx, `UPDATE jobs SET status = 'completed', result_id = ?, lease_until = NULL, updated_at = ?
		WHERE id = ? AND status IN ('submitted', 'judging')`, saved.ID, now, jobID)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, fmt.Errorf("job %s is not waiting for a grade: %w", jobID, registry.ErrConflict)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	s.broker.Publish(sessionID, nil)
	return saved, nil
}
