// Package sqlite is the registry's embedded default store: one SQLite file
// (through modernc.org/sqlite, pure Go, so no C toolchain is needed), in
// WAL mode, created on first use.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/internal/broker"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the registry on SQLite.
type Store struct {
	db        *sql.DB
	path      string
	syncCache syncCache
	stmts     sync.Map   // query text → *sql.Stmt
	wmu       sync.Mutex // one writer at a time in this process
	broker    broker.Broker[evaluation.SessionMessage]
}

var _ registry.Store = (*Store)(nil)

// Open opens (and creates, with its folder) the database file at path.
// Call Migrate before using a new file.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlite: empty path: %w", registry.ErrInvalid)
	}
	if err := create(path); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	// Writers take the lock at BEGIN (txlock=immediate) and wait for each
	// other (busy_timeout), so concurrent syncs serialise instead of
	// failing half-way; readers never block in WAL mode.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
		"&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	// Eight for the work, one kept for the sync state (syncstate.go).
	db.SetMaxOpenConns(9)
	// Keep every connection: a new one parses the whole schema first.
	db.SetMaxIdleConns(9)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &Store{db: db, path: path}
	if err := s.Ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// create makes the database's folder (0700) and an empty file (0600) when
// they do not exist: the file holds the registry's secrets (the issuer's
// signing seed, the record key), so nobody else on the machine may read
// it. SQLite gives its -wal and -shm files the database file's mode.
func create(path string) error {
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// PermissionProblems names what lets other users of the machine read the
// database at path: the file (or its -wal file) readable by group or
// others, or its folder writable by them. Servers log them as warnings at start.
func PermissionProblems(path string) []string {
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil
	}
	var out []string
	var harm string
	check := func(p, what string, mask os.FileMode) {
		fi, err := os.Stat(p)
		if err != nil {
			return
		}
		if m := fi.Mode().Perm(); m&mask != 0 {
			out = append(out, fmt.Sprintf("%s %s has mode %04o: other users can %s (chmod %04o %s)",
				what, p, m, harm, m&^mask, p))
		}
	}
	harm = "read the registry's secrets"
	check(path, "the database file", 0o077)
	check(path+"-wal", "the database's WAL file", 0o077)
	harm = "replace the database"
	check(filepath.Dir(path), "the database's folder", 0o022)
	return out
}

// Migrate applies the embedded schema migrations that have not run yet.
func (s *Store) Migrate(ctx context.Context) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.db, fsys)
	if err != nil {
		return fmt.Errorf("sqlite: migrations: %w", err)
	}
	current, known, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: migrations: %w", translate(err))
	}
	if current > known {
		return fmt.Errorf("sqlite: %w", &registry.SchemaTooNewError{Current: current, Known: known})
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", translate(err))
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.syncCache.mu.Lock()
	s.syncCache.close()
	s.syncCache.mu.Unlock()
	s.stmts.Range(func(_, st any) bool { st.(*sql.Stmt).Close(); return true })
	return s.db.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: %v: %w", err, registry.ErrUnavailable)
	}
	return nil
}

// translate turns driver errors into the domain's error kinds.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w", registry.ErrNotFound)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%v: %w", se, registry.ErrConflict)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY, sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_TRIGGER,
			sqlite3.SQLITE_CONSTRAINT_NOTNULL, sqlite3.SQLITE_CONSTRAINT:
			return fmt.Errorf("%v: %w", se, registry.ErrInvalid)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL:
			return fmt.Errorf("%v: %w", se, registry.ErrUnavailable)
		}
		if se.Code()&0xff == sqlite3.SQLITE_BUSY {
			return fmt.Errorf("%v: %w", se, registry.ErrUnavailable)
		}
	}
	return err
}

func wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("sqlite: %s: %w", fmt.Sprintf(format, args...), translate(*errp))
	}
}

// Times are stored as UTC text of fixed width, so that comparing the text
// compares the times (keyset pagination depends on it).
const timeFormat = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// SchemaVersion is the newest schema version this binary knows: the
// number of its last embedded migration.
func SchemaVersion() int64 { return registry.LatestMigration(migrations, "migrations") }

// SchemaVersions reads the database's schema version (0 before the first
// migration) and the newest this binary knows, changing nothing but
// goose's version table, which it creates when missing.
func (s *Store) SchemaVersions(ctx context.Context) (current, known int64, err error) {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return 0, 0, err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, s.db, fsys)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: migrations: %w", err)
	}
	current, known, err = p.GetVersions(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: %w", translate(err))
	}
	return current, known, nil
}

// Backup writes a consistent copy of the database to path, online: readers
// and writers go on meanwhile (VACUUM INTO reads one snapshot). The copy is
// created 0600, since it holds the registry's secrets, and path must not
// exist yet. Restore by stopping the servers and putting the copy in place
// of the database file (removing its -wal and -shm files).
func (s *Store) Backup(ctx context.Context, path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	f.Close()
	if _, err := s.db.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		os.Remove(path)
		return fmt.Errorf("sqlite: backup to %s: %w", path, translate(err))
	}
	return nil
}
