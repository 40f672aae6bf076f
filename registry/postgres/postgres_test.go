package postgres_test

import (
	"testing"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/postgres"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/registrytest"
)

// MustOpen opens a migrated store on a new, empty schema.
func MustOpen(t testing.TB) *postgres.Store { return postgrestest.Open(t) }

func TestStore(t *testing.T) {
	registrytest.RunStoreTests(t, func(t *testing.T) registry.Store { return MustOpen(t) })
}

func TestMigrateTwice(t *testing.T) {
	s := MustOpen(t)
	if err := s.Migrate(t.Context()); err != nil {
		t.Errorf("second migrate: %v", err)
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

// TestAttemptLimits runs the attempt limits on two replicas of one
// schema.
func TestAttemptLimits(t *testing.T) {
	registrytest.RunAttemptLimitTests(t, func(t *testing.T) (registrytest.FullStore, registrytest.FullStore) {
		url := postgrestest.URL(t)
		return postgrestest.OpenURL(t, url), postgrestest.OpenURL(t, url)
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
