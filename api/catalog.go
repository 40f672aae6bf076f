package api

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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

	mu   sync.Mutex // held while a generation loads
	snap atomic.Pointer[snapshot]
}

// snapshot is the registry at one generation. It is never modified.
type snapshot struct {
	generation int64
	state      registry.SyncState
	entries    []*registry.Entry // all, removed included, by number
	byID       map[string]*registry.Entry
	byNumber   map[int]*registry.Entry

	cacheMu  sync.Mutex              // held while a list response is built, and for pages
	cache    sync.Map                // encoded list responses by query: string to *encoded, read without a lock
	cacheLen int                     // entries in cache; under cacheMu
	pages    map[string]renderedPage // web pages by path, at their latest fingerprint

	searchOnce sync.Once
	searchDocs []searchDoc // the entries as search reads them, made at the first search
}

func (c *catalog) current(ctx context.Context) (*snapshot, error) {
	st, err := c.registry.State(ctx)
	if err != nil {
		return nil, err
	}
	if s := c.snap.Load(); s != nil && s.generation == st.Generation {
		return s, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.snap.Load(); s != nil && s.generation == st.Generation { // loaded while this waited
		return s, nil
	}
	entries, err := c.registry.Entries(ctx)
	if err != nil {
		return nil, err
	}
	s := &snapshot{generation: st.Generation, state: st, entries: entries,
		byID: map[string]*registry.Entry{}, byNumber: map[int]*registry.Entry{}}
	for _, e := range entries {
		s.byID[e.ID] = e
		s.byNumber[e.Number] = e
	}
	c.snap.Store(s)
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

// encoded is a JSON response body kept for a sync generation, with its
// length as the Content-Length header's value.
type encoded struct {
	body   []byte
	length []string // capacity = length: see nosniff
}

// cached returns the response kept under key, built once per generation.
func (s *snapshot) cached(key string, build func() ([]byte, error)) (*encoded, error) {
	if e, ok := s.cache.Load(key); ok {
		return e.(*encoded), nil
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if e, ok := s.cache.Load(key); ok { // built while this waited
		return e.(*encoded), nil
	}
	b, err := build()
	if err != nil {
		return nil, err
	}
	e := &encoded{body: b, length: []string{strconv.Itoa(len(b))}[:1:1]}
	if s.cacheLen < 256 { // queries are few; this bounds hostile variety
		s.cache.Store(key, e)
		s.cacheLen++
	}
	return e, nil
}
