// Package ratelimit counts requests per key against limits: in token
// buckets in the process (one replica), or in fixed windows of a counter
// every replica shares (the PostgreSQL store), so that N replicas
// together allow a client what one would. The doors (the HTTP API and
// what goes through its router) decide what to limit and per what key.
package ratelimit

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limit is one rate limit: at most Burst requests of one key (a client
// address, an agent, a session) at once, PerMinute on average.
type Limit struct {
	// Name says what is limited (registrations, claims, …); limits of
	// different names never share a count.
	Name      string
	PerMinute int
	Burst     int
}

// Limiter decides whether one more request of key is within a limit,
// and if not, how long until it would be. NewMemory keeps the counts in
// the process (one replica; SQLite's), NewShared in the database every
// replica uses (PostgreSQL).
type Limiter interface {
	Allow(ctx context.Context, l Limit, key string) (ok bool, wait time.Duration, err error)
}

// memoryLimiter keeps a token bucket per limit and key, in this
// process: limits per replica. Idle buckets are dropped.
type memoryLimiter struct {
	mu     sync.Mutex
	limits map[string]*limiter
	now    func() time.Time
}

// NewMemory keeps limits in this process (time.Now when now is
// nil): right for one process, such as a server on SQLite; with N
// replicas a client gets N times the limit.
func NewMemory(now func() time.Time) Limiter {
	if now == nil {
		now = time.Now
	}
	return &memoryLimiter{limits: map[string]*limiter{}, now: now}
}

func (m *memoryLimiter) Allow(_ context.Context, l Limit, key string) (bool, time.Duration, error) {
	m.mu.Lock()
	lim := m.limits[l.Name]
	if lim == nil {
		lim = newLimiter(l.PerMinute, l.Burst, m.now)
		m.limits[l.Name] = lim
	}
	m.mu.Unlock()
	ok, wait := lim.allow(key)
	return ok, wait, nil
}

// limiter is the token buckets of one limit, by key.
type limiter struct {
	mu      sync.Mutex
	every   rate.Limit
	burst   int
	clients map[string]*bucket
	now     func() time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(perMinute, burst int, now func() time.Time) *limiter {
	return &limiter{every: rate.Limit(float64(perMinute) / 60), burst: burst, clients: map[string]*bucket{}, now: now}
}

func (l *limiter) allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.clients) > 10000 {
		for k, b := range l.clients {
			if now.Sub(b.seen) > 10*time.Minute {
				delete(l.clients, k)
			}
		}
	}
	b := l.clients[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.clients[key] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// Counter counts requests of a key in fixed windows, in a store every
// replica shares (registry/postgres's Store is one): the count of the
// window [start, end) after this request.
type Counter interface {
	CountHit(ctx context.Context, key string, start, end time.Time) (int64, error)
}

// sharedLimiter keeps limits in a Counter.
type sharedLimiter struct {
	counter Counter
	now     func() time.Time
}

// NewShared keeps limits in c, so that N replicas together allow a
// client what one would (time.Now when now is nil). A limit becomes fixed
// windows of Burst requests, each Burst/PerMinute minutes long: the same
// average rate and burst as a token bucket, except that a client may
// spend one window's burst at its end and the next one's at its start.
func NewShared(c Counter, now func() time.Time) Limiter {
	if now == nil {
		now = time.Now
	}
	return &sharedLimiter{counter: c, now: now}
}

func (s *sharedLimiter) Allow(ctx context.Context, l Limit, key string) (bool, time.Duration, error) {
	window := time.Minute
	if l.PerMinute > 0 {
		window = max(time.Duration(float64(l.Burst)/float64(l.PerMinute)*float64(time.Minute)).Truncate(time.Second), time.Second)
	}
	now := s.now()
	start := now.Truncate(window)
	end := start.Add(window)
	n, err := s.counter.CountHit(ctx, l.Name+":"+key, start, end)
	if err != nil {
		return false, 0, err
	}
	if n > int64(l.Burst) {
		return false, end.Sub(now), nil
	}
	return true, 0, nil
}
