package sqlite_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/sqlite"
)

// TestRefusesANewerSchema: a database migrated by a newer sip is refused
// with the versions named, and nothing is changed.
func TestRefusesANewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if cur, known, err := s.SchemaVersions(t.Context()); err != nil || cur != 0 || known != sqlite.SchemaVersion() {
		t.Fatalf("a new file: SchemaVersions = %d, %d, %v", cur, known, err)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	known := sqlite.SchemaVersion()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)", known+1); err != nil {
		t.Fatal(err)
	}
	err = s.Migrate(t.Context())
	var tooNew *registry.SchemaTooNewError
	if !errors.As(err, &tooNew) || tooNew.Current != known+1 || tooNew.Known != known || !errors.Is(err, registry.ErrInvalid) {
		t.Fatalf("Migrate on a newer schema: %v", err)
	}
	if !strings.Contains(err.Error(), "sip --version") {
		t.Errorf("the error does not say which sip to run: %v", err)
	}
}

// TestFilesArePrivate: a new database and its folder are readable by their
// owner only; an existing one that others can read is named.
func TestFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sip")
	path := filepath.Join(dir, "registry.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %04o", p, fi.Mode().Perm(), err, want)
		}
	}
	if probs := sqlite.PermissionProblems(path); len(probs) != 0 {
		t.Errorf("a new database: %v", probs)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	probs := sqlite.PermissionProblems(path)
	if len(probs) != 2 || !strings.Contains(probs[0], "mode 0644") || !strings.Contains(probs[0], "chmod 0600") ||
		!strings.Contains(probs[1], "replace the database") {
		t.Errorf("a readable file in a writable folder: %q", probs)
	}
}
