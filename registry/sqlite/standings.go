package sqlite

import (
	"context"

	"github.com/sipregistry/sip/registry/evaluation"
)

// Standings lists public agents by points, passes and name.
func (s *Store) Standings(ctx context.Context, offset, limit int) (_ []evaluation.Standing, total int, err error) {
	defer wrap(&err, "Standings")
	if err := s.queryRow(ctx, "SELECT COUNT(*) FROM agents WHERE results_public = 1").Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.query(ctx, `SELECT a.id, a.name, a.description, a.owner IS NOT NULL AND a.owner != '',
			COALESCE(SUM(CASE WHEN r.revoked_at IS NULL THEN r.points_earned END), 0),
			COUNT(DISTINCT CASE WHEN r.passed = 1 AND r.revoked_at IS NULL AND r.provenance IN ('graded', 'imported') THEN r.evaluation_id END)
		FROM agents a LEFT JOIN results r ON r.agent_id = a.id
		WHERE a.results_public = 1
		GROUP BY a.id ORDER BY 5 DESC, 6 DESC, a.name LIMIT ? OFFSET ?`, limit, offset)
	out, err := collect(rows, err, func(row scanner) (evaluation.Standing, error) {
		var st evaluation.Standing
		return st, row.Scan(&st.AgentID, &st.Name, &st.Description, &st.Claimed, &st.Points, &st.Passes)
	})
	return out, total, err
}
