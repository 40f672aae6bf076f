package main

import (
	"encoding/json"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
)

// TestBackupAndRestore: `sip backup` copies a database while a server
// uses it; a server started on the restored copy has the agent and its
// key, and the registry's signing key (the same issuer).
func TestBackupAndRestore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "registry.db")
	m := MustRunMain(t, &Main{DatabaseURL: db, BaseURL: "https://sip.example"})
	c := apitest.New(t, m.URL)
	var r struct {
		Agent struct {
			APIKey string `json:"api_key"`
		} `json:"agent"`
	}
	if resp := c.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"kept-agent"}`),
		map[string][]string{"Content-Type": {"application/json"}}, &r); resp.StatusCode != 201 {
		t.Fatalf("register: %d", resp.StatusCode)
	}
	var did map[string]any
	c.Get("/.well-known/did.json", &did)

	backup := filepath.Join(dir, "backup.db")
	code, out, errOut := runSip(t, "backup", "--db", db, backup)
	if code != exitOK || !strings.Contains(out, "backed up sqlite:"+db+" to "+backup) {
		t.Fatalf("sip backup: exit %d\n%s%s", code, out, errOut)
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the backup's mode: %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if code, _, errOut := runSip(t, "backup", "--db", db, backup); code != exitUsage || !strings.Contains(errOut, "exists") {
		t.Errorf("a backup over an existing file: exit %d %s", code, errOut)
	}

	// Restore: the copy in place of a database on another machine.
	restored := filepath.Join(t.TempDir(), "registry.db")
	raw, err := os.ReadFile(backup)
	if err != nil || os.WriteFile(restored, raw, 0o600) != nil {
		t.Fatal(err)
	}
	m2 := MustRunMain(t, &Main{DatabaseURL: restored, BaseURL: "https://sip.example"})
	c2 := apitest.New(t, m2.URL)
	if resp := c2.Do("GET", "/api/v1/agents/me", nil, map[string][]string{"Authorization": {"Bearer " + r.Agent.APIKey}}, nil); resp.StatusCode != 200 {
		t.Errorf("the agent's key on the restored registry: %d", resp.StatusCode)
	}
	var did2 map[string]any
	c2.Get("/.well-known/did.json", &did2)
	if did["verificationMethod"] == nil || !equalJSON(did["verificationMethod"], did2["verificationMethod"]) {
		t.Errorf("the issuer's keys changed with the restore:\n%v\n%v", did["verificationMethod"], did2["verificationMethod"])
	}
}

func TestBackupRefuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--db", "postgres://postgres@127.0.0.1:1/x", "out.db"}, "pg_dump"},
		{[]string{"backup"}, "name one FILE"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if code, _, errOut := runSip(t, tt.args...); code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("got exit %d %q; want %d naming %q", code, errOut, exitUsage, tt.want)
			}
		})
	}
}

// TestMigrateStatus: status reads the schema version and changes nothing;
// after sip migrate it is up to date.
func TestMigrateStatus(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "registry.db")
	code, out, _ := runSip(t, "migrate", "status", "--db", db)
	if code != exitOK || !strings.Contains(out, "schema: 0\n") || !strings.Contains(out, "migration(s) pending") {
		t.Errorf("a new database: exit %d\n%s", code, out)
	}
	if code, _, errOut := runSip(t, "migrate", "--db", db); code != exitOK {
		t.Fatalf("migrate: %d %s", code, errOut)
	}
	code, out, _ = runSip(t, "migrate", "status", "--db", db)
	if code != exitOK || !strings.Contains(out, "status: up to date") {
		t.Errorf("after migrate: exit %d\n%s", code, out)
	}
	if code, _, _ := runSip(t, "migrate", "sideways", "--db", db); code != exitUsage {
		t.Errorf("an unknown subcommand: exit %d", code)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestPostgresBackupAndRestore follows docs/operations.md on PostgreSQL:
// pg_dump while a server runs, lose the data, pg_restore, and a new server
// has the agent and its key.
func TestPostgresBackupAndRestore(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not on PATH (CI=true, so this fails)", tool)
			}
			t.Skipf("SKIPPING: %s is not on PATH (Debian: postgresql-client)", tool)
		}
	}
	dbURL := postgrestest.URL(t)
	u, err := neturl.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	plain := *u // what libpq's tools accept: no pool settings, no search_path
	q := neturl.Values{}
	if v := u.Query().Get("sslmode"); v != "" {
		q.Set("sslmode", v)
	}
	plain.RawQuery = q.Encode()

	m := MustRunMain(t, &Main{DatabaseURL: dbURL, BaseURL: "https://sip.example"})
	c := apitest.New(t, m.URL)
	var r struct {
		Agent struct {
			APIKey string `json:"api_key"`
		} `json:"agent"`
	}
	if resp := c.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"pg-kept"}`),
		map[string][]string{"Content-Type": {"application/json"}}, &r); resp.StatusCode != 201 {
		t.Fatalf("register: %d", resp.StatusCode)
	}
	dump := filepath.Join(t.TempDir(), "sip.dump")
	if out, err := exec.Command("pg_dump", "--format=custom", "--schema="+schema, "--file="+dump, plain.String()).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	// The data is lost.
	pool, err := pgxpool.New(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(t.Context(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("pg_restore", "--no-owner", "--dbname="+plain.String(), dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	m2 := MustRunMain(t, &Main{DatabaseURL: dbURL, BaseURL: "https://sip.example"})
	c2 := apitest.New(t, m2.URL)
	if resp := c2.Do("GET", "/api/v1/agents/me", nil, map[string][]string{"Authorization": {"Bearer " + r.Agent.APIKey}}, nil); resp.StatusCode != 200 {
		t.Errorf("the agent's key on the restored registry: %d", resp.StatusCode)
	}
}
