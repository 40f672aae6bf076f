package sqlite

import (
	"context"
	"time"

	"github.com/sipregistry/sip/registry"
)

var _ registry.SecretStore = (*Store)(nil)

// Secret returns a named secret, storing candidate when there is none.
func (s *Store) Secret(ctx context.Context, name string, candidate []byte) (_ []byte, err error) {
	defer wrap(&err, "Secret")
	if _, err := s.exec(ctx, "INSERT INTO secrets (name, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
		name, candidate, formatTime(time.Now())); err != nil {
		return nil, err
	}
	var out []byte
	err = s.queryRow(ctx, "SELECT secret FROM secrets WHERE name = ?", name).Scan(&out)
	return out, err
}
