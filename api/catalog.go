package api

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/sipregistry/sip/registry"
)

// catalog keeps the registry's entries in memory for one sync generation.
// Every request asks the registry's catalogue which generation is current
// (both stores answer it from memory: SQLite while the WAL-index header
// shows no new commit, PostgreSQL while LISTEN brings no sync
// notification), so a sync
// applied by any process or replica is seen by the next request (on
// PostgreSQL, once its notification arrives), and a database outage fails
// the request instead of serving stale data (on SQLite at the next commit
// check, on PostgreSQL once the LISTEN connection drops, or within a
// second).
type catalog struct {
	registry *registry.Catalog
	metrics  *metrics

	mu   sync.Mutex
	snap *snapshot
}

// snapshot is the registry at one generation. It is never modified.
type snapshot struct {
	generation int64
	state      registry.SyncState
	entries    []*registry.Entry // all, removed included, by number
	byID       map[string]*registry.Entry
	byNumber   map[int]*registry.Entry

	cacheMu sync.Mutex
	cache   map[string][]byte       // encoded list responses by query
	pages   map[string]renderedPage // web pages by path, at their latest fingerprint

	searchOnce sync.Once
	searchDocs []searchDoc // the entries as search reads them, made at the first search
}

func (c *catalog) current(ctx context.Context) (*snapshot, error) {
	st, err := c.registry.State(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != nil && c.snap.generation == st.Generation {
		return c.snap, nil
	}
	entries, err := c.registry.Entries(ctx)
	if err != nil {
		return nil, err
	}
	s := &snapshot{generation: st.Generation, state: st, entries: entries,
		byID: map[string]*registry.Entry{}, byNumber: map[int]*registry.Entry{}, cache: map[string][]byte{}}
	for _, e := range entries {
		s.byID[e.ID] = e
		s.byNumber[e.Number] = e
	}
	c.snap = s
	if c.metrics != nil {
		c.metrics.reloads.Inc()
	}
	return s, nil
}

// lookup finds an entry by id, "SIP-N" or "N".
func (s *snapshot) lookup(ref string) *registry.Entry {
	if e := s.byID[ref]; e != nil {
		return e
	}
	num := ref
	if len(ref) > 4 && strings.EqualFold(ref[:4], "sip-") {
		num = ref[4:]
	}
	if n, err := strconv.Atoi(num); err == nil && n > 0 {
		return s.byNumber[n]
	}
	return nil
}

func (s *snapshot) cached(key string, build func() ([]byte, error)) ([]byte, error) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if b, ok := s.cache[key]; ok {
		return b, nil
	}
	b, err := build()
	if err != nil {
		return nil, err
	}
	if len(s.cache) < 256 { // queries are few; this bounds hostile variety
		s.cache[key] = b
	}
	return b, nil
}
