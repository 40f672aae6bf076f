package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/sipregistry/sip/registry/evaluation"
)

// attemptsWhere selects the registrations that count against a limit;
// its arguments are attemptsArgs.
func attemptsWhere(l evaluation.AttemptLimit) string {
	w := ` FROM registrations r LEFT JOIN results res ON res.registration_id = r.id
		WHERE r.evaluation_id = ? AND (r.agent_id = ? OR (? <> '' AND r.agent_id IN (SELECT id FROM agents WHERE lower(owner) = lower(?))))
		AND NOT (r.status = 'cancelled' AND r.started_at IS NULL)`
	if len(l.Uncounted) > 0 {
		w += ` AND (res.outcome IS NULL OR res.outcome NOT IN (?` + strings.Repeat(", ?", len(l.Uncounted)-1) + `))`
	}
	return w
}

func attemptsArgs(agentID, evaluationID string, l evaluation.AttemptLimit) []any {
	args := []any{evaluationID, agentID, l.Owner, l.Owner}
	for _, o := range l.Uncounted {
		args = append(args, string(o))
	}
	return args
}

// countAttempts counts with row, which reads outside or inside a
// transaction.
func countAttempts(row func(query string, args ...any) scanner, agentID, evaluationID string, l evaluation.AttemptLimit) (evaluation.AttemptCount, error) {
	var c evaluation.AttemptCount
	where, args := attemptsWhere(l), attemptsArgs(agentID, evaluationID, l)
	if err := row("SELECT COUNT(*)"+where, args...).Scan(&c.Counted); err != nil {
		return c, err
	}
	var passed bool
	var at string
	err := row("SELECT res.passed, res.completed_at"+where+" AND res.id IS NOT NULL ORDER BY res.completed_at DESC, res.id DESC LIMIT 1", args...).Scan(&passed, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	if err != nil || passed {
		return c, err
	}
	c.LastFailed, err = parseTime(at)
	return c, err
}

// Attempts counts the attempts that count against a limit.
func (s *Store) Attempts(ctx context.Context, agentID, evaluationID string, l evaluation.AttemptLimit) (_ evaluation.AttemptCount, err error) {
	defer wrap(&err, "Attempts")
	return countAttempts(func(q string, args ...any) scanner { return s.queryRow(ctx, q, args...) }, agentID, evaluationID, l)
}

// RegisterWithin opens a registration under a limit. BEGIN IMMEDIATE
// makes the count and the insert one write transaction: every other
// writer, in this process or another, waits for it.
func (s *Store) RegisterWithin(ctx context.Context, r *evaluation.Registration, l evaluation.AttemptLimit) (_ *evaluation.Registration, created bool, err error) {
	if !l.Limited() {
		return s.Register(ctx, r)
	}
	defer wrap(&err, "RegisterWithin")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer done()
	row := func(q string, args ...any) scanner { return s.txQueryRow(ctx, tx, q, args...) }
	open, err := scanRegistration(row("SELECT "+registrationColumns+registrationFrom+
		" WHERE r.agent_id = ? AND r.evaluation_id = ? AND r.status IN "+openStatuses, r.AgentID, r.EvaluationID))
	if err == nil {
		return open, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, false, err
	}
	n, err := countAttempts(row, r.AgentID, r.EvaluationID, l)
	if err != nil {
		return nil, false, err
	}
	if !l.Allows(n, r.RegisteredAt) {
		return nil, false, &evaluation.LimitReached{Limit: l, Count: n}
	}
	if _, err := s.txExec(ctx, tx, `INSERT INTO registrations (id, agent_id, evaluation_id, version_id, status, registered_at)
		VALUES (?, ?, ?, ?, 'registered', ?)`, r.ID, r.AgentID, r.EvaluationID, r.VersionID, formatTime(r.RegisteredAt)); err != nil {
		return nil, false, err
	}
	if err := tx.Commit(); err != nil {
		return nil, false, err
	}
	out, err := s.Registration(ctx, r.ID)
	return out, err == nil, err
}
