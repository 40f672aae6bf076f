package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
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

// PutExternalCredential records an agent's verified external credential,
// claiming its subject for the agent in the same transaction: a subject
// another agent holds is ErrConflict (external_subjects' primary key).
func (s *Store) PutExternalCredential(ctx context.Context, c *evaluation.ExternalCredential) (err error) {
	defer wrap(&err, "PutExternalCredential")
	var until any
	if !c.ValidUntil.IsZero() {
		until = formatTime(c.ValidUntil)
	}
	tx, done, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.txExec(ctx, tx, `INSERT INTO external_subjects (issuer, subject, agent_id) VALUES (?, ?, ?)
		ON CONFLICT (issuer, subject, agent_id) DO NOTHING`, c.Issuer, c.Subject, c.AgentID); err != nil {
		return err
	}
	if _, err := s.txExec(ctx, tx, `INSERT INTO external_credentials (agent_id, issuer, achievement, subject, credential, valid_until, recorded_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, issuer, achievement) DO UPDATE SET subject = excluded.subject,
		credential = excluded.credential, valid_until = excluded.valid_until, recorded_at = excluded.recorded_at`,
		c.AgentID, c.Issuer, c.Achievement, c.Subject, string(c.Credential), until, formatTime(c.RecordedAt)); err != nil {
		return err
	}
	return tx.Commit()
}

// ExternalCredentials lists an agent's external credentials.
func (s *Store) ExternalCredentials(ctx context.Context, agentID string) (_ []*evaluation.ExternalCredential, err error) {
	defer wrap(&err, "ExternalCredentials")
	rows, err := s.query(ctx, `SELECT agent_id, issuer, achievement, subject, credential, valid_until, recorded_at
		FROM external_credentials WHERE agent_id = ? ORDER BY issuer, achievement`, agentID)
	return collect(rows, err, func(row scanner) (*evaluation.ExternalCredential, error) {
		var c evaluation.ExternalCredential
		var cred, recorded string
		var until sql.NullString
		if err := row.Scan(&c.AgentID, &c.Issuer, &c.Achievement, &c.Subject, &cred, &until, &recorded); err != nil {
			return nil, err
		}
		c.Credential = []byte(cred)
		var err error
		if c.ValidUntil, err = parseTime(until.String); err != nil {
			return nil, err
		}
		c.RecordedAt, err = parseTime(recorded)
		return &c, err
	})
}
