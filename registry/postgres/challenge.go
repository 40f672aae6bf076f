package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// OpenRegistrationChallenge returns the agent's open registration for an
// evaluation and the challenge with that id (nil when there is none).
func (s *Store) OpenRegistrationChallenge(ctx context.Context, agentID, evaluationID, challengeID string) (_ *evaluation.Registration, _ *evaluation.Challenge, err error) {
	defer wrap(&err, "OpenRegistrationChallenge")
	var (
		c                    evaluation.Challenge
		id, regID, agent, nc *string
		values               []int32
		created, expires     *time.Time
		used                 *time.Time
	)
	r, err := scanRegistrationWith(s.pool.QueryRow(ctx, "SELECT "+registrationColumns+`,
			c.id, c.registration_id, c.agent_id, c.challenge_values, c.nonce, c.created_at, c.expires_at, c.used_at`+registrationFrom+`
			LEFT JOIN challenges c ON c.id = $3
		WHERE r.agent_id = $1 AND r.evaluation_id = $2 AND r.status IN `+openStatuses, agentID, evaluationID, challengeID),
		&id, &regID, &agent, &values, &nc, &created, &expires, &used)
	if err != nil || id == nil {
		return r, nil, err
	}
	c.ID, c.RegistrationID, c.AgentID, c.Nonce = *id, *regID, *agent, *nc
	c.CreatedAt, c.ExpiresAt = created.UTC(), expires.UTC()
	if used != nil {
		c.UsedAt = used.UTC()
	}
	c.Values = make([]int, len(values))
	for i, v := range values {
		c.Values[i] = int(v)
	}
	return r, &c, nil
}

const challengeColumns = `id, registration_id, agent_id, challenge_values, nonce, created_at, expires_at, used_at`

func scanChallenge(row pgx.Row, extra ...any) (*evaluation.Challenge, error) {
	var c evaluation.Challenge
	var used *time.Time
	var values []int32
	if err := row.Scan(append([]any{&c.ID, &c.RegistrationID, &c.AgentID, &values, &c.Nonce, &c.CreatedAt, &c.ExpiresAt, &used}, extra...)...); err != nil {
		return nil, err
	}
	c.Values = make([]int, len(values))
	for i, v := range values {
		c.Values[i] = int(v)
	}
	c.CreatedAt, c.ExpiresAt = c.CreatedAt.UTC(), c.ExpiresAt.UTC()
	if used != nil {
		c.UsedAt = used.UTC()
	}
	return &c, nil
}

// Challenge returns a challenge.
func (s *Store) Challenge(ctx context.Context, id string) (_ *evaluation.Challenge, err error) {
	defer wrap(&err, "Challenge")
	return scanChallenge(s.pool.QueryRow(ctx, "SELECT "+challengeColumns+" FROM challenges WHERE id = $1", id))
}

// StartChallenge returns the open challenge of the agent's registration
// or stores c for it and starts the registration, in one statement (one
// round trip): the challenge is inserted only if there is no open one
// and the registration could be started. Of concurrent starts one makes
// the challenge: the others find the registration's challenge count
// changed under them, and read again.
func (s *Store) StartChallenge(ctx context.Context, evaluationID string, c *evaluation.Challenge) (_ *evaluation.Challenge, created bool, err error) {
	defer wrap(&err, "StartChallenge")
	var versionID int64
	// A round that finds nothing is followed by another while the agent
	// has an open registration: a concurrent start made the challenge, or
	// a concurrent request registered, after the round's snapshot.
	for range 4 {
		out, err := scanChallenge(s.pool.QueryRow(ctx, `WITH reg AS (
				SELECT id, challenges, version_id FROM registrations
				WHERE agent_id = $2 AND evaluation_id = $7 AND status IN ('registered', 'in_progress')
					AND NOT (status = 'in_progress' AND deadline_at IS NOT NULL AND deadline_at <= $5)),
			open AS (
				SELECT `+challengeColumns+` FROM challenges
				WHERE registration_id = (SELECT id FROM reg) AND used_at IS NULL AND expires_at > $5 ORDER BY created_at DESC LIMIT 1),
			started AS (
				UPDATE registrations r SET status = 'in_progress', started_at = COALESCE(r.started_at, $5), deadline_at = $6, challenges = r.challenges + 1
				FROM reg WHERE r.id = reg.id AND r.challenges = reg.challenges AND r.status IN ('registered', 'in_progress')
					AND NOT EXISTS (SELECT 1 FROM open) RETURNING r.id),
			ins AS (
				INSERT INTO challenges (id, registration_id, agent_id, challenge_values, nonce, created_at, expires_at)
				SELECT $1, started.id, $2, $3, $4, $5, $6 FROM started RETURNING `+challengeColumns+`)
			SELECT *, false, (SELECT version_id FROM reg) FROM open UNION ALL SELECT *, true, (SELECT version_id FROM reg) FROM ins`,
			c.ID, c.AgentID, c.Values, c.Nonce, c.CreatedAt, c.ExpiresAt, evaluationID), &created, &versionID)
		if out != nil {
			out.VersionID = versionID
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return out, created, err
		}
		// Nothing: no open registration (not found), one past its
		// deadline (its challenge expired unanswered: the attempt is over,
		// and the sweeper ends it), one that cannot be started, or one a
		// concurrent request changed.
		open, err := s.OpenRegistration(ctx, c.AgentID, evaluationID)
		if err != nil {
			return nil, false, err
		}
		if open.Overdue(c.CreatedAt) {
			return nil, false, fmt.Errorf("registration %s is past its deadline: %w", open.ID, registry.ErrGone)
		}
	}
	return nil, false, fmt.Errorf("registration is not open for a challenge: %w", registry.ErrConflict)
}

// SetChallengeExpiry changes when an unused challenge expires.
func (s *Store) SetChallengeExpiry(ctx context.Context, id string, expires time.Time) (err error) {
	defer wrap(&err, "SetChallengeExpiry")
	_, err = s.pool.Exec(ctx, `WITH ch AS (UPDATE challenges SET expires_at = $2 WHERE id = $1 AND used_at IS NULL RETURNING registration_id)
		UPDATE registrations SET deadline_at = $2 WHERE id = (SELECT registration_id FROM ch) AND status = 'in_progress'`, id, expires)
	return err
}

// AnswerChallenge uses a challenge and records its result together, in
// one statement (one round trip, one commit). The challenge's row lock
// orders concurrent answers; the registration is completed only if it is
// open and the challenge was unused; points are credited only if the
// agent has none for the evaluation yet.
func (s *Store) AnswerChallenge(ctx context.Context, challengeID string, r *evaluation.Result, points float64) (_ *evaluation.Result, err error) {
	defer wrap(&err, "AnswerChallenge")
	details, err := json.Marshal(orEmpty(r.Details))
	if err != nil {
		return nil, err
	}
	trace, err := json.Marshal(r.Trace)
	if err != nil {
		return nil, err
	}
	var expires *time.Time
	if !r.ExpiresAt.IsZero() {
		expires = &r.ExpiresAt
	}
	var used, completed int
	var earned *float64
	err = s.pool.QueryRow(ctx, `WITH used AS (
			UPDATE challenges SET used_at = $14 WHERE id = $1 AND used_at IS NULL RETURNING id
		), reg AS (
			UPDATE registrations SET status = 'completed', completed_at = $14
			WHERE id = $3 AND status IN `+openStatuses+` AND EXISTS (SELECT 1 FROM used) RETURNING id
		), ins AS (
			INSERT INTO results (id, registration_id, agent_id, evaluation_id, version_id, version, content_sha256,
				passed, score, max_score, points_earned, details, trace, completed_at, expires_at, outcome)
			SELECT $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
				CASE WHEN $9 AND $16::double precision > 0 AND NOT EXISTS (
					SELECT 1 FROM results WHERE agent_id = $4 AND evaluation_id = $5 AND points_earned > 0)
				THEN $16::double precision ELSE 0 END,
				$12, $13, $14, $15, $17
			FROM reg
			RETURNING points_earned
		)
		SELECT (SELECT count(*) FROM used), (SELECT count(*) FROM reg), (SELECT points_earned FROM ins)`,
		challengeID, r.ID, r.RegistrationID, r.AgentID, r.EvaluationID, r.VersionID, r.Version, r.ContentSHA256, r.Passed,
		r.Score, r.MaxScore, details, trace, r.CompletedAt, expires, points, string(r.EndedAs())).Scan(&used, &completed, &earned)
	switch {
	case err != nil:
		return nil, err
	case used == 0:
		return nil, fmt.Errorf("challenge already used: %w", registry.ErrGone)
	case completed == 0 || earned == nil:
		return nil, fmt.Errorf("registration is not open: %w", registry.ErrConflict)
	}
	out := *r
	out.PointsEarned = *earned
	return &out, nil
}
