package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/postgres"
	"github.com/sipregistry/sip/registry/sqlite"
	"github.com/sipregistry/sip/registry/stats"
)

// store is what the commands need of a registry database.
type store interface {
	registry.Store
	registry.AgentStore
	evaluation.VersionStore
	evaluation.AttemptStore
	evaluation.ChallengeStore
	evaluation.ResultStore
	evaluation.RevocationStore
	evaluation.PresentedStore
	evaluation.JobStore
	evaluation.JudgingStore
	inbox.Store
	evaluation.SessionStore
	evaluation.MessageStore
	evaluation.ProctorStore
	evaluation.SeatStore
	registry.SecretStore
	registry.EditorStore
	stats.Source
	// ResultsSince lists every result completed at or after since,
	// oldest first (sip traces export).
	ResultsSince(ctx context.Context, since time.Time) ([]*evaluation.Result, error)
	Migrate(ctx context.Context) error
}

// defaultDatabase is the embedded SQLite file used when neither --db nor
// SIP_DATABASE_URL is given: $XDG_DATA_HOME/sip/registry.db, or
// ~/.local/share/sip/registry.db.
func defaultDatabase(e env) string {
	dir := e.getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(".sip", "registry.db")
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "sip", "registry.db")
}

// databaseURL picks the database: the flag, then SIP_DATABASE_URL, then
// the embedded default.
func databaseURL(e env, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := e.getenv("SIP_DATABASE_URL"); v != "" {
		return v
	}
	return defaultDatabase(e)
}

// openStore opens the database that url names: postgres://… for
// PostgreSQL; sqlite:PATH or a plain path for SQLite. A server keeps its
// PostgreSQL connections open; a one-shot command opens what it uses.
func openStore(ctx context.Context, url string, server bool) (store, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		if server {
			return postgres.Open(ctx, url, postgres.KeepWarm())
		}
		return postgres.Open(ctx, url)
	case strings.HasPrefix(url, "sqlite:"):
		return sqlite.Open(ctx, strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//"))
	case strings.Contains(url, "://"):
		return nil, fmt.Errorf("database URL %q: use postgres://… or sqlite:PATH: %w", redactURL(url), registry.ErrInvalid)
	}
	return sqlite.Open(ctx, url)
}

// describeDatabase names a database for messages, without its password.
func describeDatabase(url string) string {
	if strings.Contains(url, "://") {
		return redactURL(url)
	}
	return "sqlite:" + strings.TrimPrefix(url, "sqlite:")
}

// exitForStoreError maps a database error to an exit code.
func exitForStoreError(err error) int {
	switch {
	case errors.Is(err, registry.ErrInvalid):
		return exitConfig
	case errors.Is(err, registry.ErrUnavailable):
		return exitUnavailable
	}
	return exitInternal
}

func redactURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }

// openMigrated opens the database that the --db flag (or the environment)
// names and applies its migrations. On failure it reports for command and
// returns the exit code; otherwise the caller closes the store.
func openMigrated(ctx context.Context, e env, command, flagValue string) (store, int) {
	url := databaseURL(e, flagValue)
	st, err := openStore(ctx, url, false)
	if err == nil {
		if err = st.Migrate(ctx); err != nil {
			st.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "sip %s: %s: %v\n", command, describeDatabase(url), err)
		return nil, exitForStoreError(err)
	}
	return st, exitOK
}

// warnPermissions logs what lets other users read a SQLite database.
func warnPermissions(log *slog.Logger, url string) {
	if strings.Contains(url, "://") {
		return
	}
	for _, p := range sqlite.PermissionProblems(strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")) {
		log.Warn(p)
	}
}
