package api

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/sipregistry/sip/registry/stats"
)

// statsCache keeps figures until what they were computed from changes.
//
// An evaluation's figures are kept per mark (its count of results and of
// revoked results, read from indexes on every view) and per UTC day
// (periods end today): a page never shows figures older than the last
// result. The registry's overview counts every agent, registration and
// result, so it is kept per sync generation for overviewTTL instead: at
// most a minute behind. Concurrent misses compute once.
type statsCache struct {
	source stats.Source
	now    func() time.Time
	flight singleflight.Group

	mu       sync.Mutex
	evals    map[string]evalFigures
	overview *overviewFigures
}

type evalFigures struct {
	mark stats.Mark
	day  time.Time
	figs *stats.Evaluation
}

type overviewFigures struct {
	generation int64
	at         time.Time
	totals     stats.Totals
}

// overviewTTL is how long the registry's overview is kept.
const overviewTTL = time.Minute

// maxCachedEvaluations bounds the cache (a registry has a few hundred).
const maxCachedEvaluations = 4096

func newStatsCache(source stats.Source, now func() time.Time) *statsCache {
	return &statsCache{source: source, now: now, evals: map[string]evalFigures{}}
}

// evaluation returns an evaluation's figures, with or without the
// results another registry asserted without evidence.
func (c *statsCache) evaluation(ctx context.Context, id string, asserted stats.Asserted) (*stats.Evaluation, error) {
	mark, err := c.source.Mark(ctx, id)
	if err != nil {
		return nil, err
	}
	now := c.now().UTC()
	day := now.Truncate(24 * time.Hour)
	key := id
	if asserted == stats.IncludeAsserted {
		key += "+asserted"
	}
	c.mu.Lock()
	f, ok := c.evals[key]
	c.mu.Unlock()
	if ok && f.mark == mark && f.day.Equal(day) {
		return f.figs, nil
	}
	v, err, _ := c.flight.Do("e:"+key, func() (any, error) {
		facts, err := c.source.Facts(ctx, id)
		if err != nil {
			return nil, err
		}
		figs := stats.Summarize(facts, now, asserted)
		c.mu.Lock()
		if len(c.evals) >= maxCachedEvaluations {
			clear(c.evals)
		}
		// the facts may be newer than mark: keyed by the mark they were
		// read after, they are recomputed at the next view at worst
		c.evals[key] = evalFigures{mark: mark, day: day, figs: figs}
		c.mu.Unlock()
		return figs, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*stats.Evaluation), nil
}

// totals returns the registry-wide counts as of at most overviewTTL ago
// and the generation given.
func (c *statsCache) totals(ctx context.Context, generation int64) (stats.Totals, time.Time, error) {
	now := c.now()
	c.mu.Lock()
	o := c.overview
	c.mu.Unlock()
	if o != nil && o.generation == generation && now.Sub(o.at) < overviewTTL && !now.Before(o.at) {
		return o.totals, o.at, nil
	}
	v, err, _ := c.flight.Do("overview", func() (any, error) {
		t, err := c.source.Totals(ctx)
		if err != nil {
			return nil, err
		}
		o := &overviewFigures{generation: generation, at: now, totals: t}
		c.mu.Lock()
		c.overview = o
		c.mu.Unlock()
		return o, nil
	})
	if err != nil {
		return stats.Totals{}, time.Time{}, err
	}
	o = v.(*overviewFigures)
	return o.totals, o.at, nil
}
