package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// OpenRegistrationChallenge returns the agent's open registration for an
// evaluation and the challenge with that id (nil when there is none).
func (s *Store) OpenRegistrationChallenge(ctx context.Context, agentID, evaluationID, challengeID string) (_ *evaluation.Registration, _ *evaluation.Challenge, err error) {
	defer wrap(&err, "OpenRegistrationChallenge")
	var id, regID, agent, values, nonce, created, expires, used sql.NullString
	r, err := scanRegistrationWith(s.queryRow(ctx, "SELECT "+registrationColumns+`,
			c.id, c.registration_id, c.agent_id, c.challenge_values, c.nonce, c.created_at, c.expires_at, c.used_at`+registrationFrom+`
			LEFT JOIN challenges c ON c.id = ?
		WHERE r.agent_id = ? AND r.evaluation_id = ? AND r.status IN `+openStatuses, challengeID, agentID, evaluationID),
		&id, &regID, &agent, &values, &nonce, &created, &expires, &used)
	if err != nil || !id.Valid {
		return r, nil, err
	}
	c := evaluation.Challenge{ID: id.String, RegistrationID: regID.String, AgentID: agent.String, Nonce: nonce.String}
	if err := json.Unmarshal([]byte(values.String), &c.Values); err != nil {
		return nil, nil, err
	}
	if c.CreatedAt, err = parseTime(created.String); err != nil {
		return nil, nil, err
	}
	if c.ExpiresAt, err = parseTime(expires.String); err != nil {
		return nil, nil, err
	}
	if c.UsedAt, err = parseTime(used.String); err != nil {
		return nil, nil, err
	}
	return r, &c, nil
}

func scanChallenge(row scanner) (*evaluation.Challenge, error) {
	var c evaluation.Challenge
	var values, created, expires string
	var used sql.NullString
	if err := row.Scan(&c.ID, &c.RegistrationID, &c.AgentID, &values, &c.Nonce, &created, &expires, &used); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(values), &c.Values); err != nil {
		return nil, err
	}
	var err error
	if c.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if c.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, err
	}
	c.UsedAt, err = parseTime(used.String)
	return &c, err
}

const challengeColumns = `id, registration_id, agent_id, challenge_values, nonce, created_at, expires_at, used_at`

// Challenge returns a challenge.
func (s *Store) Challenge(ctx context.Context, id string) (_ *evaluation.Challenge, err error) {
	defer wrap(&err, "Challenge")
	return scanChallenge(s.queryRow(ctx, "SELECT "+challengeColumns+" FROM challenges WHERE id = ?", id))
}

// StartChallenge returns the open challenge of the agent's registration
// or stores c for it and starts the registration, in one transaction.
func (s *Store) StartChallenge(ctx context.Context, evaluationID string, c *evaluation.Challenge) (_ *evaluation.Challenge, created bool, err error) {
	defer wrap(&err, "StartChallenge")
	values, err := json.Marshal(c.Values)
	if err != nil {
		return nil, false, err
	}
	tx, done, err := s.begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer done()
	var regID, status string
	var versionID int64
	var overdue bool
	if err := s.txQueryRow(ctx, tx, `SELECT id, status, version_id, status = 'in_progress' AND deadline_at IS NOT NULL AND deadline_at <= ?
		FROM registrations WHERE agent_id = ? AND evaluation_id = ? AND status IN `+openStatuses,
		formatTime(c.CreatedAt), c.AgentID, evaluationID).Scan(&regID, &status, &versionID, &overdue); err != nil {
		return nil, false, err
	}
	if status != string(evaluation.RegRegistered) && status != string(evaluation.RegInProgress) {
		return nil, false, fmt.Errorf("registration is not open for a challenge: %w", registry.ErrConflict)
	}
	if overdue {
		// Its challenge expired unanswered: the attempt is over (the
		// sweeper ends it), and takes no new challenge.
		return nil, false, fmt.Errorf("registration %s is past its deadline: %w", regID, registry.ErrGone)
	}
	open, err := scanChallenge(s.txQueryRow(ctx, tx, "SELECT "+challengeColumns+` FROM challenges
		WHERE registration_id = ? AND used_at IS NULL AND expires_at > ? ORDER BY created_at DESC LIMIT 1`, regID, formatTime(c.CreatedAt)))
	if err == nil {
		open.VersionID = versionID
		return open, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, false, err
	}
	if _, err := s.txExec(ctx, tx, `UPDATE registrations SET status = 'in_progress', started_at = COALESCE(started_at, ?), deadline_at = ? WHERE id = ?`,
		formatTime(c.CreatedAt), formatTime(c.ExpiresAt), regID); err != nil {
		return nil, false, err
	}
	out := *c
	out.RegistrationID, out.VersionID = regID, versionID
	if _, err := s.txExec(ctx, tx, `INSERT INTO challenges (id, registration_id, agent_id, challenge_values, nonce, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, out.ID, out.RegistrationID, out.AgentID, string(values), out.Nonce, formatTime(out.CreatedAt), formatTime(out.ExpiresAt)); err != nil {
		return nil, false, err
	}
	return &out, true, tx.Commit()
}

// SetChallengeExpiry changes when an unused challenge expires.
func (s *Store) SetChallengeExpiry(ctx context.Context, id string, expires time.Time) (err error) {
	defer wrap(&err, "SetChallengeExpiry")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.txExec(ctx, tx, "UPDATE challenges SET expires_at = ? WHERE id = ? AND used_at IS NULL", formatTime(expires), id); err != nil {
		return err
	}
	if _, err := s.txExec(ctx, tx, `UPDATE registrations SET deadline_at = ?
		WHERE id = (SELECT registration_id FROM challenges WHERE id = ? AND used_at IS NULL) AND status = 'in_progress'`, formatTime(expires), id); err != nil {
		return err
	}
	return tx.Commit()
}

// AnswerChallenge uses a challenge and records its result together.
func (s *Store) AnswerChallenge(ctx context.Context, challengeID string, r *evaluation.Result, points float64) (_ *evaluation.Result, err error) {
	defer wrap(&err, "AnswerChallenge")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := s.txExec(ctx, tx, "UPDATE challenges SET used_at = ? WHERE id = ? AND used_at IS NULL", formatTime(r.CompletedAt), challengeID)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, fmt.Errorf("challenge already used: %w", registry.ErrGone)
	}
	out, err := s.recordResult(ctx, tx, r, points)
	if err != nil {
		return nil, err
	}
	return out, tx.Commit()
}
