// Package postgrestest gives tests a real, empty PostgreSQL database: a
// fresh schema per test in the database at SIP_TEST_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/test). Without a reachable server the
// tests are skipped, loudly, except under CI=true, where they fail.
package postgrestest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry/postgres"
)

// DefaultURL is used when SIP_TEST_DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// URL returns the URL of a new, empty schema for this test, dropped when
// the test ends. For a test (not a benchmark) it asks for a pool that
// connects as needed.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("SIP_TEST_DATABASE_URL")
	if base == "" {
		base = DefaultURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is unreachable at SIP_TEST_DATABASE_URL (CI=true, so this fails): %v", err)
		}
		t.Skipf("SKIPPING PostgreSQL tests: no server at %s (%v). Start one, or set SIP_TEST_DATABASE_URL; CI=true makes this a failure.", redact(base), err)
	}
	defer conn.Close(context.Background())
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, base); err == nil {
			c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			c.Close(ctx)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	if _, bench := t.(*testing.B); !bench {
		// Tests run in parallel, each with its own store or server:
		// pools that connect as needed keep them under max_connections.
		// Benchmarks keep what a server does (postgres.KeepWarm).
		q.Set("pool_min_conns", "0")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

// Open returns a migrated store on a new, empty schema (see URL), opened
// as a server opens it and closed when the test ends.
func Open(t testing.TB) *postgres.Store {
	t.Helper()
	return OpenURL(t, URL(t))
}

// OpenURL is Open on a database the caller chose, such as another
// replica's schema or a proxy in front of it.
func OpenURL(t testing.TB, url string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), url, postgres.KeepWarm())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}
