package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// lockLive takes the lock that joins of the session's evaluation take
// (JoinLive), so no seat is taken until tx ends.
func lockLive(ctx context.Context, tx pgx.Tx, sessionID string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('sip-live:' || current_schema() || ':' || evaluation_id, 0))
		FROM sessions WHERE id = $1`, sessionID)
	return err
}

// checkSeats reads, in tx, what c needs of a session and runs its Check.
// The caller holds the session's join lock; the proctor's qualifying
// pass is read FOR SHARE, so a revocation waits for the grade, and the
// grade for a revocation under way.
func checkSeats(ctx context.Context, tx pgx.Tx, sessionID string, c *evaluation.SeatCheck) error {
	if c == nil {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT p.agent_id, a.owner FROM session_participants p JOIN agents a ON a.id = p.agent_id
		WHERE p.session_id = $1 AND p.role <> 'proctor' ORDER BY p.agent_id`, sessionID)
	seated, err := collect(rows, err, func(row pgx.Row) (registry.Agent, error) {
		var a registry.Agent
		err := row.Scan(&a.ID, &a.Owner)
		return a, err
	})
	if err != nil {
		return err
	}
	st := evaluation.Seats{Seated: seated}
	if err := tx.QueryRow(ctx, "SELECT owner FROM agents WHERE id = $1", c.ProctorID).Scan(&st.ProctorOwner); err != nil {
		return err
	}
	if c.Qualification != "" {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM results WHERE agent_id = $1 AND evaluation_id = $2 AND passed
			AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3) FOR SHARE) q`, c.ProctorID, c.Qualification, c.Now).Scan(&n); err != nil {
			return err
		}
		st.Qualified = n > 0
	}
	return c.Check(st)
}
