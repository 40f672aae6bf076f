package postgres_test

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/postgres"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
)

// TestRefusesANewerSchema: a database migrated by a newer sip is refused
// with the versions named, and nothing is changed.
func TestRefusesANewerSchema(t *testing.T) {
	url := postgrestest.URL(t)
	s, err := postgres.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	known := postgres.SchemaVersion()
	if cur, k, err := s.SchemaVersions(t.Context()); err != nil || cur != known || k != known {
		t.Fatalf("SchemaVersions = %d, %d, %v; want %d, %d", cur, k, err, known, known)
	}
	conn, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(t.Context(), "INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)", known+1); err != nil {
		t.Fatal(err)
	}
	err = s.Migrate(t.Context())
	var tooNew *registry.SchemaTooNewError
	if !errors.As(err, &tooNew) || tooNew.Current != known+1 || tooNew.Known != known || !errors.Is(err, registry.ErrInvalid) {
		t.Fatalf("Migrate on a newer schema: %v", err)
	}
}
