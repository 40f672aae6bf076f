package main

import (
	"context"
	"fmt"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/postgres"
	"github.com/sipregistry/sip/registry/sqlite"
)

const migrateAbout = `
Applies the registry's embedded schema migrations to the database (--db,
else SIP_DATABASE_URL, else the embedded SQLite file). 'sip serve' and
'sip sync' migrate on their own; run this to migrate ahead of a rollout.

'sip migrate status' changes nothing: it prints the database's schema
version and the newest this sip knows. Migrations only go forward; a sip
refuses a database a newer sip migrated (exit 78), and says which to run.`

func runMigrate(ctx context.Context, e env, args []string) int {
	flags := newFlagSet("migrate", "[status] [--db URL]", migrateAbout)
	db := flags.String("db", "", "database URL (default: SIP_DATABASE_URL, else the embedded SQLite file)")
	rest, code, ok := parseFlags(flags, e, args)
	if !ok {
		return code
	}
	switch {
	case len(rest) == 1 && rest[0] == "status":
		return migrateStatus(ctx, e, *db)
	case len(rest) > 0:
		fmt.Fprintf(e.stderr, "sip migrate: unexpected argument %q (the only subcommand is status)\n", rest[0])
		return exitUsage
	}
	st, code := openMigrated(ctx, e, "migrate", *db)
	if code != exitOK {
		return code
	}
	st.Close()
	fmt.Fprintf(e.stdout, "migrated %s\n", describeDatabase(databaseURL(e, *db)))
	return exitOK
}

// versioned is a store that reports its schema version.
type versioned interface {
	SchemaVersions(ctx context.Context) (current, known int64, err error)
}

func migrateStatus(ctx context.Context, e env, flagValue string) int {
	url := databaseURL(e, flagValue)
	st, err := openStore(ctx, url, false)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip migrate status: %s: %v\n", describeDatabase(url), err)
		return exitForStoreError(err)
	}
	defer st.Close()
	v, ok := st.(versioned)
	if !ok {
		fmt.Fprintf(e.stderr, "sip migrate status: %s does not report its schema version\n", describeDatabase(url))
		return exitInternal
	}
	current, known, err := v.SchemaVersions(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip migrate status: %s: %v\n", describeDatabase(url), err)
		return exitForStoreError(err)
	}
	fmt.Fprintf(e.stdout, "database: %s\nschema: %d\nthis sip (%s) knows: %d\n", describeDatabase(url), current, sipVersion(), known)
	switch {
	case current > known:
		err := &registry.SchemaTooNewError{Current: current, Known: known}
		fmt.Fprintf(e.stdout, "status: too new for this sip\n")
		fmt.Fprintf(e.stderr, "sip migrate status: %v\n", err)
		return exitConfig
	case current < known:
		fmt.Fprintf(e.stdout, "status: %d migration(s) pending (%d to %d); sip migrate, sip serve or sip sync applies them\n", known-current, current+1, known)
	default:
		fmt.Fprintf(e.stdout, "status: up to date\n")
	}
	return exitOK
}

// schemaVersions is the line `sip --version` adds: the newest schema each
// store of this binary knows.
func schemaVersions() string {
	return fmt.Sprintf("sqlite %d, postgres %d", sqlite.SchemaVersion(), postgres.SchemaVersion())
}
