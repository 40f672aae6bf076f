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
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
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
