package sqlite

import (
	"context"
	"time"

	"github.com/sipregistry/sip/registry"
)

// CredentialIndex is the index of a result's credential in the revocation
// status list, given the first time it is asked for (the next free one)
// and the same ever after. Returns registry.ErrNotFound without the result.
func (s *Store) CredentialIndex(ctx context.Context, resultID string) (_ int64, err error) {
	defer wrap(&err, "CredentialIndex")
	var n int64
	if err := s.queryRow(ctx, "SELECT list_index FROM credential_status WHERE result_id = ?", resultID).Scan(&n); err == nil {
		return n, nil
	}
	row, unlock := s.writeRow(ctx, `INSERT INTO credential_status (result_id, list_index)
		SELECT r.id, (SELECT COALESCE(MAX(list_index), -1) + 1 FROM credential_status) FROM results r WHERE r.id = ?
		ON CONFLICT (result_id) DO UPDATE SET list_index = list_index RETURNING list_index`, resultID)
	defer unlock()
	err = row.Scan(&n)
	return n, err
}

// RevokeResult revokes a result once: the first reason and time stay.
// Returns registry.ErrNotFound without the result.
func (s *Store) RevokeResult(ctx context.Context, resultID, reason string, at time.Time) (err error) {
	defer wrap(&err, "RevokeResult")
	res, err := s.exec(ctx, `UPDATE results SET revoked_reason = CASE WHEN revoked_at IS NULL THEN ? ELSE revoked_reason END,
		revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, reason, formatTime(at), resultID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return registry.ErrNotFound
	}
	return nil
}

// RevokedIndexes lists the status-list indexes in [from, to) of revoked
// results' credentials.
func (s *Store) RevokedIndexes(ctx context.Context, from, to int64) (_ []int64, err error) {
	defer wrap(&err, "RevokedIndexes")
	rows, err := s.query(ctx, `SELECT cs.list_index FROM credential_status cs JOIN results r ON r.id = cs.result_id
		WHERE r.revoked_at IS NOT NULL AND cs.list_index >= ? AND cs.list_index < ? ORDER BY cs.list_index`, from, to)
	return collect(rows, err, func(row scanner) (int64, error) {
		var n int64
		return n, row.Scan(&n)
	})
}
