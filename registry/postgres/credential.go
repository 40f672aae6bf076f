package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// CredentialIndex is the index of a result's credential in the revocation
// status list, given the first time it is asked for (from a sequence) and
// the same ever after. Returns registry.ErrNotFound without the result.
func (s *Store) CredentialIndex(ctx context.Context, resultID string) (_ int64, err error) {
	defer wrap(&err, "CredentialIndex")
	var n int64
	err = s.pool.QueryRow(ctx, `WITH ins AS (
			INSERT INTO credential_status (result_id) SELECT id FROM results WHERE id = $1
			ON CONFLICT (result_id) DO NOTHING RETURNING list_index)
		SELECT list_index FROM ins UNION ALL SELECT list_index FROM credential_status WHERE result_id = $1`, resultID).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		// A concurrent caller committed it after this statement's
		// snapshot: it is there now (or the result does not exist).
		err = s.pool.QueryRow(ctx, "SELECT list_index FROM credential_status WHERE result_id = $1", resultID).Scan(&n)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, registry.ErrNotFound
	}
	return n, err
}

// RevokeResult revokes a result once: the first reason and time stay.
// Returns registry.ErrNotFound without the result.
func (s *Store) RevokeResult(ctx context.Context, resultID, reason string, at time.Time) (err error) {
	defer wrap(&err, "RevokeResult")
	tag, err := s.pool.Exec(ctx, `UPDATE results SET revoked_reason = CASE WHEN revoked_at IS NULL THEN $1 ELSE revoked_reason END,
		revoked_at = COALESCE(revoked_at, $2) WHERE id = $3`, reason, at, resultID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return registry.ErrNotFound
	}
	return nil
}

// RevokedIndexes lists the status-list indexes in [from, to) of revoked
// results' credentials.
func (s *Store) RevokedIndexes(ctx context.Context, from, to int64) (_ []int64, err error) {
	defer wrap(&err, "RevokedIndexes")
	rows, err := s.pool.Query(ctx, `SELECT cs.list_index FROM credential_status cs JOIN results r ON r.id = cs.result_id
		WHERE r.revoked_at IS NOT NULL AND cs.list_index >= $1 AND cs.list_index < $2 ORDER BY cs.list_index`, from, to)
	return collect(rows, err, func(row pgx.Row) (int64, error) {
		var n int64
		return n, row.Scan(&n)
	})
}

// PutExternalCredential records an agent's verified external credential,
// claiming its subject for the agent in the same transaction: a subject
// another agent holds is ErrConflict (external_subjects' primary key; the
// credential row's foreign key names its subject's agent).
func (s *Store) PutExternalCredential(ctx context.Context, c *evaluation.ExternalCredential) (err error) {
	defer wrap(&err, "PutExternalCredential")
	var until *time.Time
	if !c.ValidUntil.IsZero() {
		until = &c.ValidUntil
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO external_subjects (issuer, subject, agent_id) VALUES ($1, $2, $3)
		ON CONFLICT (issuer, subject, agent_id) DO NOTHING`, c.Issuer, c.Subject, c.AgentID); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO external_credentials (agent_id, issuer, achievement, subject, credential, valid_until, recorded_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (agent_id, issuer, achievement) DO UPDATE SET subject = excluded.subject,
		credential = excluded.credential, valid_until = excluded.valid_until, recorded_at = excluded.recorded_at`,
		c.AgentID, c.Issuer, c.Achievement, c.Subject, c.Credential, until, c.RecordedAt); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// ExternalCredentials lists an agent's external credentials.
func (s *Store) ExternalCredentials(ctx context.Context, agentID string) (_ []*evaluation.ExternalCredential, err error) {
	defer wrap(&err, "ExternalCredentials")
	rows, err := s.pool.Query(ctx, `SELECT agent_id, issuer, achievement, subject, credential, valid_until, recorded_at
		FROM external_credentials WHERE agent_id = $1 ORDER BY issuer, achievement`, agentID)
	return collect(rows, err, func(row pgx.Row) (*evaluation.ExternalCredential, error) {
		var c evaluation.ExternalCredential
		var until *time.Time
		if err := row.Scan(&c.AgentID, &c.Issuer, &c.Achievement, &c.Subject, &c.Credential, &until, &c.RecordedAt); err != nil {
			return nil, err
		}
		if until != nil {
			c.ValidUntil = until.UTC()
		}
		c.RecordedAt = c.RecordedAt.UTC()
		return &c, nil
	})
}
