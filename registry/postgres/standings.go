package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry/evaluation"
)

// Standings lists public agents by points, passes and name.
func (s *Store) Standings(ctx context.Context, offset, limit int) (_ []evaluation.Standing, total int, err error) {
	defer wrap(&err, "Standings")
	if err := s.pool.QueryRow(ctx, "SELECT COUNT(*) FROM agents WHERE results_public").Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.pool.Query(ctx, `SELECT a.id, a.name, a.description, COALESCE(a.owner, '') != '',
			COALESCE(SUM(r.points_earned) FILTER (WHERE r.revoked_at IS NULL), 0)::float8,
			COUNT(DISTINCT r.evaluation_id) FILTER (WHERE r.passed AND r.revoked_at IS NULL AND r.provenance IN ('graded', 'imported'))::int
		FROM agents a LEFT JOIN results r ON r.agent_id = a.id
		WHERE a.results_public
		GROUP BY a.id ORDER BY 5 DESC, 6 DESC, a.name LIMIT $1 OFFSET $2`, limit, offset)
	out, err := collect(rows, err, func(row pgx.Row) (evaluation.Standing, error) {
		var st evaluation.Standing
		return st, row.Scan(&st.AgentID, &st.Name, &st.Description, &st.Claimed, &st.Points, &st.Passes)
	})
	return out, total, err
}
