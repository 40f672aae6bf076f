package postgres

import (
	"context"
	"time"
)

// CountHit counts one request of key in the fixed window [start, end)
// and returns the window's count so far, every replica's requests
// included: one statement, so concurrent requests on any replica each
// see their own count. Each call also sweeps a few windows that ended
// before start (rows a key that never came back left), skipping rows
// another call is sweeping, so the table holds little more than the
// current windows.
func (s *Store) CountHit(ctx context.Context, key string, start, end time.Time) (n int64, err error) {
	defer wrap(&err, "CountHit")
	err = s.pool.QueryRow(ctx, `WITH swept AS (
			DELETE FROM rate_limit_hits WHERE ctid IN (
				SELECT ctid FROM rate_limit_hits WHERE expires_at < $2 LIMIT 16 FOR UPDATE SKIP LOCKED))
		INSERT INTO rate_limit_hits (key, window_start, n, expires_at) VALUES ($1, $2, 1, $3)
		ON CONFLICT (key, window_start) DO UPDATE SET n = rate_limit_hits.n + 1
		RETURNING n`, key, start, end).Scan(&n)
	return n, err
}
