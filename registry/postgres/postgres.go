// Package postgres is the registry on PostgreSQL, through pgx v5 and a
// connection pool, for production: many stateless sip replicas share one
// database.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/internal/broker"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the registry on PostgreSQL.
type Store struct {
	pool *pgxpool.Pool
	// ctx ends with Close; it stops the LISTEN connection.
	ctx        context.Context
	cancel     context.CancelFunc
	broker     broker.Broker[evaluation.SessionMessage]
	notifier   notifier
	instance   string // tells this process's notifications from other replicas'
	listenOnce sync.Once
	listenDone chan struct{}
	listening  chan struct{} // closed once the first LISTEN is in place (or failed)
	warm       bool          // a server's store: see KeepWarm
	syncCache  syncCache
}

var _ registry.Store = (*Store)(nil)

// Option adjusts how Open connects.
type Option func(*options)

type options struct{ warm bool }

// KeepWarm opens the store as a long-running server wants it:
//   - every connection of the pool is kept open from the start: a burst
//     of requests that finds the pool short waits for new connections (a
//     backend fork, authentication and a cold statement cache each),
//     which made the whole p99 of the first seconds under load, 35-55 ms
//     against 0.5 ms on a warm pool. A pool_min_conns in the URL wins;
//   - the sync state, which every request reads, is kept in memory while
//     the LISTEN connection hears of every sync (see SyncState).
func KeepWarm() Option { return func(o *options) { o.warm = true } }

// Open connects to the database at url (postgres://…). The pool connects
// in the background (Open does not fail when the server is down) and
// reconnects on its own after the server comes back. It holds up to 16
// connections unless the URL says otherwise (pool_max_conns), and opens
// them as they are needed unless KeepWarm is given.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %v: %w", redact(err), registry.ErrInvalid)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgxpool's default (4 on small machines) queues concurrent
		// requests behind few connections; PostgreSQL serves 16 easily.
		cfg.MaxConns = 16
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.warm && !strings.Contains(url, "pool_min_conns") {
		cfg.MinConns = cfg.MaxConns
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	cfg.HealthCheckPeriod = 15 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", translate(err))
	}
	sctx, cancel := context.WithCancel(context.Background())
	return &Store{pool: pool, ctx: sctx, cancel: cancel, instance: registry.NewID(""), warm: o.warm}, nil
}

// redact keeps passwords out of error text. pgx's parse errors read
// "cannot parse `URL`: what (cause)"; the URL and the cause (which may
// quote the URL) are left out, what is wrong is kept.
func redact(err error) string {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return err.Error()
	}
	text := pe.Error()
	i := strings.LastIndex(text, "`: ")
	if i < 0 {
		return "invalid database URL"
	}
	what, _, _ := strings.Cut(text[i+3:], " (")
	return "invalid database URL: " + what
}

// Migrate applies the embedded schema migrations, holding a PostgreSQL
// advisory lock so replicas starting together migrate once.
func (s *Store) Migrate(ctx context.Context) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	// The lock is per schema: replicas sharing a schema migrate once, and
	// unrelated schemas in one database (tests) do not wait for each other.
	var schema string
	if err := s.pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return fmt.Errorf("postgres: %w", translate(err))
	}
	h := fnv.New64a()
	h.Write([]byte("sip-migrate:" + schema))
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64()>>1)), lock.WithLockTimeout(1, 300))
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	current, known, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", translate(err))
	}
	if current > known {
		return fmt.Errorf("postgres: %w", &registry.SchemaTooNewError{Current: current, Known: known})
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("postgres: migrate: %w", translate(err))
	}
	return nil
}

// Close closes the pool.
func (s *Store) Close() error {
	s.cancel()
	s.listenOnce.Do(func() {}) // no listener starts after Close; orders the read below
	if s.listenDone != nil {
		<-s.listenDone
	}
	s.notifier.stop()
	s.pool.Close()
	return nil
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %w", translate(err))
	}
	return nil
}

// translate turns driver errors into the domain's error kinds.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w", registry.ErrNotFound)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505": // unique_violation
			return fmt.Errorf("%s: %w", pe.Message, registry.ErrConflict)
		case pe.Code == "40001" || pe.Code == "40P01": // serialization failure, deadlock
			return fmt.Errorf("%s: %w", pe.Message, registry.ErrConflict)
		case pe.Code[:2] == "23": // other integrity constraints
			return fmt.Errorf("%s: %w", pe.Message, registry.ErrInvalid)
		case pe.Code[:2] == "08" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300":
			return fmt.Errorf("%s: %w", pe.Message, registry.ErrUnavailable)
		}
		return err
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	// A connection cut mid-query surfaces as an (unexpected) EOF.
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%v: %w", err, registry.ErrUnavailable)
	}
	return err
}

func wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("postgres: %s: %w", fmt.Sprintf(format, args...), translate(*errp))
	}
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
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: migrations: %w", err)
	}
	current, known, err = p.GetVersions(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: %w", translate(err))
	}
	return current, known, nil
}
