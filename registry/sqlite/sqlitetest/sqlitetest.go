// Package sqlitetest gives tests a real, empty, migrated SQLite registry
// in a file of the test's temporary folder, as postgrestest does for
// PostgreSQL.
package sqlitetest

import (
	"path/filepath"
	"testing"

	"github.com/sipregistry/sip/registry/sqlite"
)

// Open returns a migrated store on a new file, closed when the test ends.
func Open(t testing.TB) *sqlite.Store {
	t.Helper()
	return OpenAt(t, filepath.Join(t.TempDir(), "registry.db"))
}

// OpenAt opens the database file at path (made if missing) and migrates
// it; the store is closed when the test ends.
func OpenAt(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}
