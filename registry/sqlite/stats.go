package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/stats"
)

var _ stats.Source = (*Store)(nil)

// Facts lists an evaluation's results that were not revoked, oldest first.
func (s *Store) Facts(ctx context.Context, evaluationID string) (_ []stats.Fact, err error) {
	defer wrap(&err, "Facts")
	rows, err := s.query(ctx, `SELECT r.id, r.agent_id, r.version, r.outcome, r.score, r.max_score, g.registered_at, r.completed_at, r.provenance
		FROM results r JOIN registrations g ON g.id = r.registration_id
		WHERE r.evaluation_id = ? AND r.revoked_at IS NULL ORDER BY r.completed_at, r.id`, evaluationID)
	return collect(rows, err, func(row scanner) (stats.Fact, error) {
		var f stats.Fact
		var outcome, registered, completed string
		var score, maxScore sql.NullFloat64
		if err := row.Scan(&f.ResultID, &f.AgentID, &f.Version, &outcome, &score, &maxScore, &registered, &completed, &f.Provenance); err != nil {
			return f, err
		}
		f.Outcome = evaluation.Outcome(outcome)
		f.Score, f.MaxScore, f.Scored = score.Float64, maxScore.Float64, score.Valid && maxScore.Valid
		var err error
		if f.RegisteredAt, err = parseTime(registered); err != nil {
			return f, err
		}
		f.CompletedAt, err = parseTime(completed)
		return f, err
	})
}

// Mark counts an evaluation's results and revoked results.
func (s *Store) Mark(ctx context.Context, evaluationID string) (m stats.Mark, err error) {
	defer wrap(&err, "Mark")
	err = s.queryRow(ctx, `SELECT (SELECT COUNT(*) FROM results WHERE evaluation_id = ?),
		(SELECT COUNT(*) FROM results WHERE evaluation_id = ? AND revoked_at IS NOT NULL)`, evaluationID, evaluationID).Scan(&m.Results, &m.Revoked)
	return m, err
}

// Totals counts agents, registrations and results across the registry.
func (s *Store) Totals(ctx context.Context) (t stats.Totals, err error) {
	defer wrap(&err, "Totals")
	if err := s.queryRow(ctx, `SELECT (SELECT COUNT(*) FROM agents), (SELECT COUNT(DISTINCT agent_id) FROM registrations)`).
		Scan(&t.Agents, &t.AgentsRegistered); err != nil {
		return t, err
	}
	t.Registrations = map[evaluation.RegistrationStatus]int{}
	rows, err := s.query(ctx, `SELECT status, COUNT(*) FROM registrations GROUP BY status`)
	counts, err := collect(rows, err, scanCount)
	if err != nil {
		return t, err
	}
	for _, c := range counts {
		t.Registrations[evaluation.RegistrationStatus(c.key)] = c.n
	}
	t.Outcomes = map[evaluation.Outcome]int{}
	rows, err = s.query(ctx, `SELECT outcome, COUNT(*) FROM results WHERE revoked_at IS NULL GROUP BY outcome`)
	if counts, err = collect(rows, err, scanCount); err != nil {
		return t, err
	}
	for _, c := range counts {
		t.Outcomes[evaluation.Outcome(c.key)] = c.n
	}
	t.FirstSynced = map[string]time.Time{}
	rows, err = s.query(ctx, `SELECT sip_id, MIN(synced_at) FROM sip_versions GROUP BY sip_id`)
	type first struct {
		id string
		at time.Time
	}
	firsts, err := collect(rows, err, func(row scanner) (first, error) {
		var f first
		var at string
		if err := row.Scan(&f.id, &at); err != nil {
			return f, err
		}
		f.at, err = parseTime(at)
		return f, err
	})
	for _, f := range firsts {
		t.FirstSynced[f.id] = f.at
	}
	return t, err
}

type keyCount struct {
	key string
	n   int
}

func scanCount(row scanner) (keyCount, error) {
	var c keyCount
	return c, row.Scan(&c.key, &c.n)
}
