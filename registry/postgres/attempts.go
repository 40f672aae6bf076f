package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry/evaluation"
)

// attemptsWhere selects the registrations that count against a limit;
// its arguments are attemptsArgs.
func attemptsWhere(l evaluation.AttemptLimit) string {
	w := ` FROM registrations r LEFT JOIN results res ON res.registration_id = r.id
		WHERE r.evaluation_id = $1 AND (r.agent_id = $2 OR ($3 <> '' AND r.agent_id IN (SELECT id FROM agents WHERE lower(owner) = lower($3))))
		AND NOT (r.status = 'cancelled' AND r.started_at IS NULL)`
	if len(l.Uncounted) > 0 {
		w += ` AND (res.outcome IS NULL OR NOT (res.outcome = ANY($4)))`
	}
	return w
}

func attemptsArgs(agentID, evaluationID string, l evaluation.AttemptLimit) []any {
	args := []any{evaluationID, agentID, l.Owner}
	if len(l.Uncounted) > 0 {
		out := make([]string, len(l.Uncounted))
		for i, o := range l.Uncounted {
			out[i] = string(o)
		}
		args = append(args, out)
	}
	return args
}

// rowQuerier is a pool or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func countAttempts(ctx context.Context, q rowQuerier, agentID, evaluationID string, l evaluation.AttemptLimit) (evaluation.AttemptCount, error) {
	var c evaluation.AttemptCount
	where, args := attemptsWhere(l), attemptsArgs(agentID, evaluationID, l)
	if err := q.QueryRow(ctx, "SELECT COUNT(*)"+where, args...).Scan(&c.Counted); err != nil {
		return c, err
	}
	var passed bool
	err := q.QueryRow(ctx, "SELECT res.passed, res.completed_at"+where+" AND res.id IS NOT NULL ORDER BY res.completed_at DESC, res.id DESC LIMIT 1",
		args...).Scan(&passed, &c.LastFailed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return c, nil
	case err != nil:
		return c, err
	case passed:
		c.LastFailed = time.Time{}
	}
	c.LastFailed = c.LastFailed.UTC()
	return c, nil
}

// Attempts counts the attempts that count against a limit.
func (s *Store) Attempts(ctx context.Context, agentID, evaluationID string, l evaluation.AttemptLimit) (_ evaluation.AttemptCount, err error) {
	defer wrap(&err, "Attempts")
	return countAttempts(ctx, s.pool, agentID, evaluationID, l)
}

// RegisterWithin opens a registration under a limit. The count and the
// insert run in one transaction that first takes an advisory lock on
// the evaluation and whose attempts are counted (the owner, or the
// agent): concurrent registrations on every replica queue on it, and
// each counts what the one before it committed.
func (s *Store) RegisterWithin(ctx context.Context, r *evaluation.Registration, l evaluation.AttemptLimit) (_ *evaluation.Registration, created bool, err error) {
	if !l.Limited() {
		return s.Register(ctx, r)
	}
	defer wrap(&err, "RegisterWithin")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback(ctx)
	whose := "agent:" + r.AgentID
	if l.Owner != "" {
		whose = "owner:" + strings.ToLower(l.Owner)
	}
	key := "sip-attempts:" + strconv.Quote(r.EvaluationID) + ":" + whose
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || $1, 0))", key); err != nil {
		return nil, false, err
	}
	open, err := scanRegistration(tx.QueryRow(ctx, "SELECT "+registrationColumns+registrationFrom+
		" WHERE r.agent_id = $1 AND r.evaluation_id = $2 AND r.status IN "+openStatuses, r.AgentID, r.EvaluationID))
	if err == nil {
		return open, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, false, err
	}
	n, err := countAttempts(ctx, tx, r.AgentID, r.EvaluationID, l)
	if err != nil {
		return nil, false, err
	}
	if !l.Allows(n, r.RegisteredAt) {
		return nil, false, &evaluation.LimitReached{Limit: l, Count: n}
	}
	// A registration of the same agent opened without a limit (and so
	// without the lock) may have won the insert: then that one is open.
	if _, err := tx.Exec(ctx, `INSERT INTO registrations (id, agent_id, evaluation_id, version_id, status, registered_at)
		VALUES ($1, $2, $3, $4, 'registered', $5)
		ON CONFLICT (agent_id, evaluation_id) WHERE status IN `+openStatuses+` DO NOTHING`,
		r.ID, r.AgentID, r.EvaluationID, r.VersionID, r.RegisteredAt); err != nil {
		return nil, false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, false, err
	}
	out, err := s.OpenRegistration(ctx, r.AgentID, r.EvaluationID)
	return out, err == nil && out.ID == r.ID, err
}
