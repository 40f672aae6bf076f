package postgres_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/postgres"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
)

// TestPoolConnections: a server's pool (KeepWarm) holds all its
// connections from the start, a pool_min_conns in the URL wins, and a
// one-shot command's pool opens only what it uses.
func TestPoolConnections(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string // added to the test's URL
		warm  bool
		want  int
	}{
		{"server", "", true, 16},
		{"server with pool_max_conns", "pool_max_conns=5", true, 5},
		{"server with pool_min_conns", "pool_min_conns=3", true, 3},
		{"command", "", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(postgrestest.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			app := "pool_" + strings.ToLower(registry.NewID(""))
			q := u.Query()
			q.Del("pool_min_conns") // the test default; this test is about the real one
			q.Set("application_name", app)
			extra, _ := url.ParseQuery(tc.query)
			for k, v := range extra {
				q[k] = v
			}
			u.RawQuery = q.Encode()
			var opts []postgres.Option
			if tc.warm {
				opts = append(opts, postgres.KeepWarm())
			}
			s, err := postgres.Open(t.Context(), u.String(), opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !tc.warm {
				if err := s.Ping(t.Context()); err != nil { // the one connection a command uses
					t.Fatal(err)
				}
			}
			plain := *u
			plain.RawQuery = ""
			conn, err := pgx.Connect(t.Context(), plain.String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			var n int
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n >= tc.want || time.Now().After(deadline) {
					break
				}
			}
			if !tc.warm {
				time.Sleep(200 * time.Millisecond) // a lazy pool must not grow on its own
				conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n)
			}
			if n != tc.want {
				t.Errorf("%d connections open, want %d", n, tc.want)
			}
		})
	}
}
