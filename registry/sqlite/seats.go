package sqlite

import (
	"context"
	"database/sql"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// checkSeats reads, in tx, what c needs of a session and runs its Check.
// Writers are serialised, so no join, claim or revocation commits
// between the read and the transaction's end.
func checkSeats(ctx context.Context, tx *sql.Tx, sessionID string, c *evaluation.SeatCheck) error {
	if c == nil {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT p.agent_id, a.owner FROM session_participants p JOIN agents a ON a.id = p.agent_id
		WHERE p.session_id = ? AND p.role <> 'proctor' ORDER BY p.agent_id`, sessionID)
	seated, err := collect(rows, err, func(row scanner) (registry.Agent, error) {
		var a registry.Agent
		err := row.Scan(&a.ID, &a.Owner)
		return a, err
	})
	if err != nil {
		return err
	}
	st := evaluation.Seats{Seated: seated}
	if err := tx.QueryRowContext(ctx, "SELECT owner FROM agents WHERE id = ?", c.ProctorID).Scan(&st.ProctorOwner); err != nil {
		return err
	}
	if c.Qualification != "" {
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM results WHERE agent_id = ? AND evaluation_id = ? AND passed = 1
			AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?))`, c.ProctorID, c.Qualification, formatTime(c.Now)).Scan(&st.Qualified); err != nil {
			return err
		}
	}
	return c.Check(st)
}
