package sqlite

import (
	"context"
	"database/sql"
	"sync"

	"github.com/sipregistry/sip/registry"
)

// syncCache keeps the sync state, which every API request asks for, and
// reads it again only when the database changed. One connection is kept
// for it: its PRAGMA data_version changes whenever any other connection
// commits, in this process or another (a `sip sync` run on the same
// file), and asking is cheaper than reading the state.
type syncCache struct {
	mu      sync.Mutex
	conn    *sql.Conn
	version *sql.Stmt // PRAGMA data_version, on conn
	read    *sql.Stmt // the state, on conn
	valid   bool
	at      int64 // data_version when state was read
	state   registry.SyncState
}

// SyncState returns the last applied sync.
func (s *Store) SyncState(ctx context.Context) (_ registry.SyncState, err error) {
	defer wrap(&err, "SyncState")
	c := &s.syncCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		if err := c.open(ctx, s.db); err != nil {
			return registry.SyncState{}, err
		}
	}
	st, err := c.get(ctx)
	if err != nil {
		c.close() // a broken connection is replaced on the next call
	}
	return st, err
}

func (c *syncCache) get(ctx context.Context) (registry.SyncState, error) {
	var v int64
	if err := c.version.QueryRowContext(ctx).Scan(&v); err != nil {
		return registry.SyncState{}, err
	}
	if c.valid && v == c.at {
		return c.state, nil
	}
	// A commit between the two reads leaves the state newer than v says:
	// the next call reads it again, never keeps it stale.
	var st registry.SyncState
	var at string
	switch err := c.read.QueryRowContext(ctx).Scan(&st.Generation, &st.CommitSHA, &st.Source, &at); {
	case err == sql.ErrNoRows:
		st = registry.SyncState{}
	case err != nil:
		return registry.SyncState{}, err
	default:
		t, err := parseTime(at)
		if err != nil {
			return registry.SyncState{}, err
		}
		st.SyncedAt = t
	}
	c.state, c.at, c.valid = st, v, true
	return st, nil
}

func (c *syncCache) open(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	version, err := conn.PrepareContext(ctx, "PRAGMA data_version")
	if err != nil {
		conn.Close()
		return err
	}
	read, err := conn.PrepareContext(ctx, "SELECT generation, commit_sha, source, synced_at FROM sync_state WHERE id = 1")
	if err != nil {
		version.Close()
		conn.Close()
		return err
	}
	c.conn, c.version, c.read, c.valid = conn, version, read, false
	return nil
}

// close gives the connection back; the caller holds mu.
func (c *syncCache) close() {
	if c.conn == nil {
		return
	}
	c.version.Close()
	c.read.Close()
	c.conn.Close()
	c.conn, c.version, c.read, c.valid = nil, nil, nil, false
}
