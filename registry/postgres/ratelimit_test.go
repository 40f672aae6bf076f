package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sipregistry/sip/registry/postgres/postgrestest"
)

// TestCountHit: hits count per key and window, from any number of
// callers at once (each gets a count of its own), and windows that ended
// are swept as later hits come, so the table stays small.
func TestCountHit(t *testing.T) {
	t.Parallel()
	url := postgrestest.URL(t)
	a, b := postgrestest.OpenURL(t, url), postgrestest.OpenURL(t, url) // two replicas
	ctx := t.Context()
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	end := t0.Add(time.Minute)

	// 40 hits at once on two replicas: the counts are 1…40, each once.
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			s := a
			if i%2 == 1 {
				s = b
			}
			n, err := s.CountHit(ctx, "registrations:203.0.113.1", t0, end)
			mu.Lock()
			defer mu.Unlock()
			if err != nil || seen[n] {
				t.Errorf("hit %d: count %d again, or %v", i, n, err)
			}
			seen[n] = true
		})
	}
	wg.Wait()
	for n := int64(1); n <= 40; n++ {
		if !seen[n] {
			t.Errorf("no hit counted %d: %v", n, seen)
		}
	}
	for _, tc := range []struct {
		key   string
		start time.Time
		want  int64
	}{
		{"registrations:203.0.113.2", t0, 1},       // another address
		{"claims:203.0.113.1", t0, 1},              // another limit
		{"registrations:203.0.113.1", end, 1},      // the next window
		{"registrations:203.0.113.1", t0, 41},      // the same window
		{"registrations:2001:db8::1", t0, 1},       // an IPv6 address
		{"agent-posts:agt_01JD3XYZ" + "é✓", t0, 1}, // any text
	} {
		t.Run(tc.key, func(t *testing.T) {
			if n, err := a.CountHit(ctx, tc.key, tc.start, tc.start.Add(time.Minute)); err != nil || n != tc.want {
				t.Errorf("CountHit(%q, %s) = %d, %v; want %d", tc.key, tc.start.Format(time.TimeOnly), n, err, tc.want)
			}
		})
	}

	// 100 addresses that never come back, then hits an hour later: each
	// sweeps some of the expired rows until none is left.
	for i := range 100 {
		if _, err := a.CountHit(ctx, fmt.Sprintf("registrations:198.51.100.%d", i), t0, end); err != nil {
			t.Fatal(err)
		}
	}
	later := t0.Add(time.Hour)
	for range 10 {
		if _, err := b.CountHit(ctx, "registrations:203.0.113.9", later, later.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var expired, current int
	if err := conn.QueryRow(ctx, "SELECT count(*) FILTER (WHERE expires_at <= $1), count(*) FILTER (WHERE expires_at > $1) FROM rate_limit_hits", later).Scan(&expired, &current); err != nil {
		t.Fatal(err)
	}
	if expired != 0 || current != 1 {
		t.Errorf("after ten hits an hour later: %d expired rows, %d current; want none expired, 1 current", expired, current)
	}
}
