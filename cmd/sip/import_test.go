package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sipregistry/sip/registry/postgres/postgrestest"
)

// safemoltSource makes a SafeMolt database of the import's fixture in a
// fresh schema and returns its URL.
func safemoltSource(t *testing.T) string {
	t.Helper()
	fixture, err := os.ReadFile(filepath.Join("..", "..", "registry", "safemolt", "testdata", "safemolt.sql"))
	if err != nil {
		t.Fatal(err)
	}
	url := postgrestest.URL(t)
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(t.Context(), string(fixture)); err != nil {
		t.Fatal(err)
	}
	return url
}

func TestImportSafeMolt(t *testing.T) {
	t.Parallel()
	from := safemoltSource(t)
	db := filepath.Join(t.TempDir(), "registry.db")
	if code, out, errOut := runSip(t, "sync", "--db", db, "--dir", bundled); code != exitOK {
		t.Fatalf("sync: %d\n%s%s", code, out, errOut)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		out  []string
	}{
		{"no source named", []string{"import", "--from", from, "--db", db}, exitUsage, []string{"name the source"}},
		{"unknown source", []string{"import", "moltbook", "--from", from, "--db", db}, exitUsage, []string{"name the source"}},
		{"no --from", []string{"import", "safemolt", "--db", db}, exitUsage, []string{"--from"}},
		{"bad batch", []string{"import", "safemolt", "--from", from, "--db", db, "--batch", "0"}, exitUsage, []string{"--batch"}},
		{"unreachable source", []string{"import", "safemolt", "--from", "postgres://postgres@127.0.0.1:1/x?connect_timeout=1", "--db", db}, exitUnavailable, []string{"sip import"}},
		{"not SafeMolt", []string{"import", "safemolt", "--from", postgrestest.URL(t), "--db", db}, exitUnavailable, []string{"no agents table"}},
		{"plan", []string{"import", "safemolt", "--from", from, "--db", db, "--plan"}, exitOK,
			[]string{"plan (nothing written)", "read 8 agents and 12 results", "backfilled", "provisioned", "orphaned_result", "future_result", "unknown_evaluation", "no_key"}},
		{"import", []string{"import", "safemolt", "--from", from, "--db", db, "--batch", "3"}, exitOK,
			[]string{"written: 8 agents (1 renamed), 12 results", "0 already imported"}},
		{"again", []string{"import", "safemolt", "--from", from, "--db", db}, exitOK,
			[]string{"written: 0 agents (0 renamed), 0 results (0 earned points); 20 already imported"}},
	} {
		code, out, errOut := runSip(t, tt.args...)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tt.name, code, tt.code, out, errOut)
			continue
		}
		for _, want := range tt.out {
			if !strings.Contains(out+errOut, want) {
				t.Errorf("%s: output lacks %q:\n%s%s", tt.name, want, out, errOut)
			}
		}
	}
}
