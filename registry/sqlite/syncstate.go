package sqlite

import (
	"context"
	"database/sql"
	"os"
	"sync"

	"github.com/sipregistry/sip/registry"
)

// syncCache keeps the sync state, which every API request asks for, and
// reads it again only when the database changed. One connection is kept
// for it: its PRAGMA data_version changes whenever any other connection
// commits, in this process or another (a `sip sync` run on the same
// file), and asking is cheaper than reading the state.
//
// Cheaper still, and tried first: the header of the WAL index (the -shm
// file every connection to a WAL database shares), which every commit
// rewrites (its change counter, last frame, salts and checksums). It is
// kept in two copies, written one after the other; when both are equal
// and equal to the header read before the state was last confirmed, no
// transaction has committed since. Anything else (a header being written,
// no -shm file) falls back to data_version. The header is read from a
// read-only mapping of the file's first page where the system has one (a
// pread per request was a third of the API's own cost for a cached list);
// else with a read.
type syncCache struct {
	mu      sync.Mutex
	conn    *sql.Conn
	version *sql.Stmt // PRAGMA data_version, on conn
	read    *sql.Stmt // the state, on conn
	valid   bool
	at      int64 // data_version when state was read
	state   registry.SyncState

	shm    *os.File
	shmMap []byte                   // the -shm file's first page, mapped; nil when not
	header [2 * walIndexHeader]byte // as read before state was last confirmed; zero when none
}

// walIndexHeader is the size of one copy of the WAL-index header
// (https://sqlite.org/walformat.html#the_wal_index_file_format).
const walIndexHeader = 48

// SyncState returns the last applied sync.
func (s *Store) SyncState(ctx context.Context) (_ registry.SyncState, err error) {
	defer wrap(&err, "SyncState")
	c := &s.syncCache
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.walHeader()
	if ok && c.valid && h == c.header {
		return c.state, nil
	}
	if c.conn == nil {
		if err := c.open(ctx, s.db, s.path+"-shm"); err != nil {
			return registry.SyncState{}, err
		}
	}
	var st registry.SyncState
	if ok {
		// The header moved: some transaction committed, perhaps not a
		// sync, so read the state (data_version could only say the same).
		// h was read before the state: a commit in between makes the next
		// call's header differ, so the state is read again.
		st, err = c.readState(ctx)
		c.at, c.header = -1, h
	} else {
		st, err = c.get(ctx)
		c.header = [2 * walIndexHeader]byte{}
	}
	if err != nil {
		c.close() // a broken connection is replaced on the next call
		return st, err
	}
	c.state, c.valid = st, true
	return st, nil
}

// walHeader reads both copies of the WAL-index header; ok when they are
// equal and initialised.
func (c *syncCache) walHeader() (h [2 * walIndexHeader]byte, ok bool) {
	if c.shmMap != nil && !readMapped(h[:], c.shmMap) {
		// The file was cut short under the mapping: read it from now on.
		unmapHeader(c.shmMap)
		c.shmMap = nil
	}
	switch {
	case c.shmMap != nil:
	case c.shm != nil:
		if n, err := c.shm.ReadAt(h[:], 0); err != nil || n != len(h) {
			return h, false
		}
	default:
		return h, false
	}
	const isInit = 12 // byte offset of the isInit flag in each copy
	return h, [walIndexHeader]byte(h[:walIndexHeader]) == [walIndexHeader]byte(h[walIndexHeader:]) && h[isInit] == 1
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
	st, err := c.readState(ctx)
	if err == nil {
		c.at = v
	}
	return st, err
}

func (c *syncCache) readState(ctx context.Context) (registry.SyncState, error) {
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
	return st, nil
}

func (c *syncCache) open(ctx context.Context, db *sql.DB, shm string) error {
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
	// The -shm file exists while a connection has the database open in
	// WAL mode, as conn does (preparing read the schema). Without it,
	// every call asks data_version.
	if f, err := os.Open(shm); err == nil {
		c.shm = f
		c.shmMap = mapHeader(f, 2*walIndexHeader)
	}
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
	if c.shmMap != nil {
		unmapHeader(c.shmMap)
	}
	if c.shm != nil {
		c.shm.Close()
	}
	c.conn, c.version, c.read, c.valid, c.shm, c.shmMap = nil, nil, nil, false, nil, nil
}
