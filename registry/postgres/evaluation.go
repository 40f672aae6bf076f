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
)

var _ registry.EvaluationStore = (*Store)(nil)

const registrationColumns = `r.id, r.agent_id, r.evaluation_id, r.version_id, v.version, r.status, r.registered_at, r.started_at, r.completed_at`
const registrationFrom = ` FROM registrations r JOIN sip_versions v ON v.id = r.version_id`
const openStatuses = `('registered', 'in_progress', 'awaiting_grading')`

func scanRegistration(row pgx.Row) (*registry.Registration, error) { return scanRegistrationWith(row) }

// scanRegistrationWith scans a registration followed by extra columns.
func scanRegistrationWith(row pgx.Row, extra ...any) (*registry.Registration, error) {
	var r registry.Registration
	var status string
	var started, completed *time.Time
	if err := row.Scan(append([]any{&r.ID, &r.AgentID, &r.EvaluationID, &r.VersionID, &r.Version, &status, &r.RegisteredAt, &started, &completed}, extra...)...); err != nil {
		return nil, err
	}
	r.Status = registry.RegistrationStatus(status)
	r.RegisteredAt = r.RegisteredAt.UTC()
	if started != nil {
		r.StartedAt = started.UTC()
	}
	if completed != nil {
		r.CompletedAt = completed.UTC()
	}
	return &r, nil
}

// Register opens a registration, or returns the open one.
func (s *Store) Register(ctx context.Context, r *registry.Registration) (_ *registry.Registration, created bool, err error) {
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
func (s *Store) OpenRegistration(ctx context.Context, agentID, evaluationID string) (_ *registry.Registration, err error) {
	defer wrap(&err, "OpenRegistration")
	return scanRegistration(s.pool.QueryRow(ctx, "SELECT "+registrationColumns+registrationFrom+
		" WHERE r.agent_id = $1 AND r.evaluation_id = $2 AND r.status IN "+openStatuses, agentID, evaluationID))
}

// OpenRegistrationChallenge returns the agent's open registration for an
// evaluation and the challenge with that id (nil when there is none).
func (s *Store) OpenRegistrationChallenge(ctx context.Context, agentID, evaluationID, challengeID string) (_ *registry.Registration, _ *registry.Challenge, err error) {
	defer wrap(&err, "OpenRegistrationChallenge")
	var (
		c                    registry.Challenge
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

// Registration returns a registration.
func (s *Store) Registration(ctx context.Context, id string) (_ *registry.Registration, err error) {
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
func (s *Store) OpenRegistrations(ctx context.Context, agentID string) (_ []*registry.Registration, err error) {
	defer wrap(&err, "OpenRegistrations")
	rows, err := s.pool.Query(ctx, "SELECT "+registrationColumns+registrationFrom+
		" WHERE r.agent_id = $1 AND r.status IN "+openStatuses, agentID)
	return collect(rows, err, scanRegistration)
}

// MoveRegistration changes a registration's status if it is in one of from.
func (s *Store) MoveRegistration(ctx context.Context, id string, from []registry.RegistrationStatus, to registry.RegistrationStatus, at time.Time) (_ *registry.Registration, err error) {
	defer wrap(&err, "MoveRegistration(%q → %s)", id, to)
	froms := make([]string, len(from))
	for i, f := range from {
		froms[i] = string(f)
	}
	set := "status = $1"
	args := []any{string(to), id, froms}
	switch to {
	case registry.RegInProgress:
		set += ", started_at = COALESCE(started_at, $4)"
		args = append(args, at)
	case registry.RegCompleted, registry.RegCancelled:
		set += ", completed_at = $4"
		args = append(args, at)
	}
	tag, err := s.pool.Exec(ctx, "UPDATE registrations SET "+set+" WHERE id = $2 AND status = ANY($3)", args...)
	if err != nil {
		return nil, err
	}
	row := func() (*registry.Registration, error) {
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

// CreateChallenge stores a new challenge.
func (s *Store) CreateChallenge(ctx context.Context, c *registry.Challenge) (err error) {
	defer wrap(&err, "CreateChallenge")
	_, err = s.pool.Exec(ctx, `INSERT INTO challenges (id, registration_id, agent_id, challenge_values, nonce, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, c.ID, c.RegistrationID, c.AgentID, c.Values, c.Nonce, c.CreatedAt, c.ExpiresAt)
	return err
}

const challengeColumns = `id, registration_id, agent_id, challenge_values, nonce, created_at, expires_at, used_at`

func scanChallenge(row pgx.Row, extra ...any) (*registry.Challenge, error) {
	var c registry.Challenge
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
func (s *Store) Challenge(ctx context.Context, id string) (_ *registry.Challenge, err error) {
	defer wrap(&err, "Challenge")
	return scanChallenge(s.pool.QueryRow(ctx, "SELECT "+challengeColumns+" FROM challenges WHERE id = $1", id))
}

// OpenChallenge returns the registration's unused, unexpired challenge.
func (s *Store) OpenChallenge(ctx context.Context, registrationID string, now time.Time) (_ *registry.Challenge, err error) {
	defer wrap(&err, "OpenChallenge")
	return scanChallenge(s.pool.QueryRow(ctx, "SELECT "+challengeColumns+` FROM challenges
		WHERE registration_id = $1 AND used_at IS NULL AND expires_at > $2 ORDER BY created_at DESC LIMIT 1`, registrationID, now))
}

// UseChallenge marks a challenge used, once.
func (s *Store) UseChallenge(ctx context.Context, id string, at time.Time) (err error) {
	defer wrap(&err, "UseChallenge")
	tag, err := s.pool.Exec(ctx, "UPDATE challenges SET used_at = $1 WHERE id = $2 AND used_at IS NULL", at, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		if _, err := s.Challenge(ctx, id); err != nil {
			return err
		}
		return fmt.Errorf("challenge already used: %w", registry.ErrConflict)
	}
	return nil
}

// StartChallenge returns the open challenge of the agent's registration
// or stores c for it and starts the registration, in one statement (one
// round trip): the challenge is inserted only if there is no open one
// and the registration could be started. Of concurrent starts one makes
// the challenge: the others find the registration's challenge count
// changed under them, and read again.
func (s *Store) StartChallenge(ctx context.Context, evaluationID string, c *registry.Challenge) (_ *registry.Challenge, created bool, err error) {
	defer wrap(&err, "StartChallenge")
	for range 2 {
		out, err := scanChallenge(s.pool.QueryRow(ctx, `WITH reg AS (
				SELECT id, challenges FROM registrations
				WHERE agent_id = $2 AND evaluation_id = $7 AND status IN ('registered', 'in_progress')),
			open AS (
				SELECT `+challengeColumns+` FROM challenges
				WHERE registration_id = (SELECT id FROM reg) AND used_at IS NULL AND expires_at > $5 ORDER BY created_at DESC LIMIT 1),
			started AS (
				UPDATE registrations r SET status = 'in_progress', started_at = COALESCE(r.started_at, $5), challenges = r.challenges + 1
				FROM reg WHERE r.id = reg.id AND r.challenges = reg.challenges AND r.status IN ('registered', 'in_progress')
					AND NOT EXISTS (SELECT 1 FROM open) RETURNING r.id),
			ins AS (
				INSERT INTO challenges (id, registration_id, agent_id, challenge_values, nonce, created_at, expires_at)
				SELECT $1, started.id, $2, $3, $4, $5, $6 FROM started RETURNING `+challengeColumns+`)
			SELECT *, false FROM open UNION ALL SELECT *, true FROM ins`,
			c.ID, c.AgentID, c.Values, c.Nonce, c.CreatedAt, c.ExpiresAt, evaluationID), &created)
		if !errors.Is(err, pgx.ErrNoRows) {
			return out, created, err
		}
		// Nothing: no open registration, one that cannot be started, or
		// a concurrent start made the challenge; the second round sees it.
	}
	if _, err := s.OpenRegistration(ctx, c.AgentID, evaluationID); err != nil {
		return nil, false, err
	}
	return nil, false, fmt.Errorf("registration is not open for a challenge: %w", registry.ErrConflict)
}

// AnswerChallenge uses a challenge and records its result together, in
// one statement (one round trip, one commit). The challenge's row lock
// orders concurrent answers; the registration is completed only if it is
// open and the challenge was unused; points are credited only if the
// agent has none for the evaluation yet.
func (s *Store) AnswerChallenge(ctx context.Context, challengeID string, r *registry.Result, points float64) (_ *registry.Result, err error) {
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
				passed, score, max_score, points_earned, details, trace, completed_at, expires_at)
			SELECT $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
				CASE WHEN $9 AND $16::double precision > 0 AND NOT EXISTS (
					SELECT 1 FROM results WHERE agent_id = $4 AND evaluation_id = $5 AND points_earned > 0)
				THEN $16::double precision ELSE 0 END,
				$12, $13, $14, $15
			FROM reg
			RETURNING points_earned
		)
		SELECT (SELECT count(*) FROM used), (SELECT count(*) FROM reg), (SELECT points_earned FROM ins)`,
		challengeID, r.ID, r.RegistrationID, r.AgentID, r.EvaluationID, r.VersionID, r.Version, r.ContentSHA256, r.Passed,
		r.Score, r.MaxScore, details, trace, r.CompletedAt, expires, points).Scan(&used, &completed, &earned)
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

// RecordResult stores a registration's result and completes it.
func (s *Store) RecordResult(ctx context.Context, r *registry.Result, points float64) (_ *registry.Result, err error) {
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
func recordResult(ctx context.Context, tx pgx.Tx, r *registry.Result, points float64) (*registry.Result, error) {
	var status string
	if err := tx.QueryRow(ctx, "SELECT status FROM registrations WHERE id = $1 FOR UPDATE", r.RegistrationID).Scan(&status); err != nil {
		return nil, err
	}
	if !registry.RegistrationStatus(status).Open() {
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
		passed, score, max_score, points_earned, details, trace, completed_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		out.ID, out.RegistrationID, out.AgentID, out.EvaluationID, out.VersionID, out.Version, out.ContentSHA256, out.Passed,
		out.Score, out.MaxScore, out.PointsEarned, details, trace, out.CompletedAt, expires); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, "UPDATE registrations SET status = 'completed', completed_at = $1 WHERE id = $2",
		out.CompletedAt, out.RegistrationID); err != nil {
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
	r.score, r.max_score, r.points_earned, r.details, r.trace, r.completed_at, r.expires_at`

func scanResult(row pgx.Row) (*registry.Result, error) {
	var r registry.Result
	var details, trace []byte
	var expires *time.Time
	if err := row.Scan(&r.ID, &r.RegistrationID, &r.AgentID, &r.EvaluationID, &r.VersionID, &r.Version, &r.ContentSHA256, &r.Passed,
		&r.Score, &r.MaxScore, &r.PointsEarned, &details, &trace, &r.CompletedAt, &expires); err != nil {
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
	return &r, nil
}

// Result returns a result.
func (s *Store) Result(ctx context.Context, id string) (_ *registry.Result, err error) {
	defer wrap(&err, "Result")
	return scanResult(s.pool.QueryRow(ctx, "SELECT "+resultColumns+" FROM results r WHERE r.id = $1", id))
}

// Results lists results, newest first, with the next page's cursor.
func (s *Store) Results(ctx context.Context, f registry.ResultFilter) (_ []*registry.Result, next string, err error) {
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
		where = append(where, "r.passed")
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
	out, next = registry.PageResults(out, limit)
	return out, next, nil
}

// Passes lists the agent's newest valid pass of each evaluation.
func (s *Store) Passes(ctx context.Context, agentID string, now time.Time) (_ []*registry.Result, err error) {
	defer wrap(&err, "Passes")
	rows, err := s.pool.Query(ctx, "SELECT "+resultColumns+` FROM (
			SELECT DISTINCT ON (evaluation_id) * FROM results
			WHERE agent_id = $1 AND passed AND (expires_at IS NULL OR expires_at > $2)
			ORDER BY evaluation_id, completed_at DESC, id DESC) r
		ORDER BY r.completed_at DESC, r.id DESC`, agentID, now)
	return collect(rows, err, scanResult)
}

// ResultsSince lists results completed at or after since, oldest first.
func (s *Store) ResultsSince(ctx context.Context, since time.Time) (_ []*registry.Result, err error) {
	defer wrap(&err, "ResultsSince")
	rows, err := s.pool.Query(ctx, "SELECT "+resultColumns+" FROM results r WHERE r.completed_at >= $1 ORDER BY r.completed_at, r.id", since)
	return collect(rows, err, scanResult)
}

// AgentPoints sums the points credited to an agent.
func (s *Store) AgentPoints(ctx context.Context, agentID string) (_ float64, err error) {
	defer wrap(&err, "AgentPoints")
	var p float64
	err = s.pool.QueryRow(ctx, "SELECT COALESCE(SUM(points_earned), 0) FROM results WHERE agent_id = $1", agentID).Scan(&p)
	return p, err
}

// PassCounts counts the agents that passed each evaluation.
func (s *Store) PassCounts(ctx context.Context) (_ map[string]int, err error) {
	defer wrap(&err, "PassCounts")
	rows, err := s.pool.Query(ctx, "SELECT evaluation_id, COUNT(DISTINCT agent_id) FROM results WHERE passed GROUP BY evaluation_id")
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	var id string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil })
	return out, err
}
