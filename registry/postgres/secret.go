package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sipregistry/sip/registry"
)

var _ registry.SecretStore = (*Store)(nil)

// Secret returns a named secret, storing candidate when there is none.
func (s *Store) Secret(ctx context.Context, name string, candidate []byte) (_ []byte, err error) {
	defer wrap(&err, "Secret")
	var out []byte
	err = s.pool.QueryRow(ctx, `WITH ins AS (
			INSERT INTO secrets (name, secret, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING secret)
		SELECT secret FROM ins UNION ALL SELECT secret FROM secrets WHERE name = $1 AND NOT EXISTS (SELECT 1 FROM ins)`,
		name, candidate, time.Now()).Scan(&out)
	if errors.Is(err, pgx.ErrNoRows) {
		// A concurrent caller committed it after this statement's
		// snapshot: it is there now.
		err = s.pool.QueryRow(ctx, "SELECT secret FROM secrets WHERE name = $1", name).Scan(&out)
	}
	return out, err
}
