package main

import (
	"context"
	"fmt"
	"os"
	"strings"
)

const backupAbout = `
Writes a consistent copy of the SQLite database (--db, else
SIP_DATABASE_URL, else the embedded SQLite file) to FILE while servers keep
running (SQLite's VACUUM INTO). FILE must not exist; it is created readable
by its owner only, because the database holds the registry's secrets.

To restore: stop every sip on the database, move the database file and its
-wal and -shm files aside, copy FILE in its place (mode 0600), start sip.

PostgreSQL is backed up with its own tools: pg_dump --format=custom, and
pg_restore to restore (see docs/operations.md).`

// backuper is a store that can copy itself online (SQLite).
type backuper interface {
	Backup(ctx context.Context, path string) error
}

func runBackup(ctx context.Context, e env, args []string) int {
	flags := newFlagSet("backup", "[--db URL] FILE", backupAbout)
	db := flags.String("db", "", "database URL (default: SIP_DATABASE_URL, else the embedded SQLite file)")
	rest, code, ok := parseFlags(flags, e, args)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		fmt.Fprintln(e.stderr, "sip backup: name one FILE to write the copy to")
		return exitUsage
	}
	url := databaseURL(e, *db)
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		fmt.Fprintln(e.stderr, "sip backup: the database is PostgreSQL: back it up with pg_dump --format=custom (docs/operations.md says how)")
		return exitUsage
	}
	if _, err := os.Stat(rest[0]); err == nil {
		fmt.Fprintf(e.stderr, "sip backup: %s exists: name a new file\n", rest[0])
		return exitUsage
	}
	// Migrated first: a backup of a database this sip cannot read would
	// be a surprise at restore time.
	st, code := openMigrated(ctx, e, "backup", *db)
	if code != exitOK {
		return code
	}
	defer st.Close()
	b, ok := st.(backuper)
	if !ok {
		fmt.Fprintf(e.stderr, "sip backup: %s cannot be backed up by sip\n", describeDatabase(url))
		return exitUsage
	}
	if err := b.Backup(ctx, rest[0]); err != nil {
		fmt.Fprintf(e.stderr, "sip backup: %v\n", err)
		return exitForStoreError(err)
	}
	fi, err := os.Stat(rest[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "sip backup: %v\n", err)
		return exitInternal
	}
	fmt.Fprintf(e.stdout, "backed up %s to %s (%d bytes)\n", describeDatabase(url), rest[0], fi.Size())
	return exitOK
}
