package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/registrytest"
	"github.com/sipregistry/sip/registry/sqlite"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// MustOpen opens a migrated store on a new file in a temporary folder.
func MustOpen(t testing.TB) *sqlite.Store { return sqlitetest.Open(t) }

func TestStore(t *testing.T) {
	registrytest.RunStoreTests(t, func(t *testing.T) registry.Store { return MustOpen(t) })
}

func TestMigrateTwice(t *testing.T) {
	s := MustOpen(t)
	if err := s.Migrate(t.Context()); err != nil {
		t.Errorf("second migrate: %v", err)
	}
}

func TestOpenCreatesFolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "registry.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkSync1000(b *testing.B) {
	registrytest.BenchSync(b, 1000, func(b *testing.B) registry.Store { return MustOpen(b) })
}

func TestAgentStore(t *testing.T) {
	registrytest.RunAgentStoreTests(t, func(t *testing.T) registry.AgentStore { return MustOpen(t) })
}

func TestEvaluationStore(t *testing.T) {
	registrytest.RunEvaluationStoreTests(t, func(t *testing.T) registrytest.FullStore { return MustOpen(t) })
}

func TestAttemptLimits(t *testing.T) {
	registrytest.RunAttemptLimitTests(t, func(t *testing.T) (registrytest.FullStore, registrytest.FullStore) {
		path := filepath.Join(t.TempDir(), "registry.db")
		a, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		if err := a.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		// A second process on the same file.
		b, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return a, b
	})
}

func TestJobStore(t *testing.T) {
	registrytest.RunJobStoreTests(t, func(t *testing.T) registrytest.JobFullStore { return MustOpen(t) })
}

func TestDeliveryStore(t *testing.T) {
	registrytest.RunDeliveryStoreTests(t, func(t *testing.T) inbox.Store { return MustOpen(t) })
}

func TestSessionStore(t *testing.T) {
	registrytest.RunSessionStoreTests(t, func(t *testing.T) registrytest.SessionFullStore { return MustOpen(t) })
}

func TestImportStore(t *testing.T) {
	registrytest.RunImportStoreTests(t, func(t *testing.T) registrytest.ImportFullStore { return MustOpen(t) })
}

func BenchmarkPostFloor(b *testing.B) {
	registrytest.BenchPostFloor(b, func(b *testing.B) registrytest.SessionFullStore { return MustOpen(b) })
}

func TestEditorStore(t *testing.T) {
	registrytest.RunEditorStoreTests(t, func(t *testing.T) registry.EditorStore { return MustOpen(t) })
}
