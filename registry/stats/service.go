package stats

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Service is what the pages and /metrics read: figures computed from a
// Source and kept until what they were computed from changes.
//
// An evaluation's figures are kept per mark (its count of results and of
// revoked results, read from indexes on every view) and per UTC day
// (periods end today): a page never shows figures older than the last
// result. The registry's totals count every agent, registration and
// result, so they are kept per sync generation for TotalsTTL instead: at
// most a minute behind. Concurrent misses compute once.
type Service struct {
	source Source
	now    func() time.Time
	flight singleflight.Group

	mu     sync.Mutex
	evals  map[string]evalFigures
	totals *totalsAt
}

type evalFigures struct {
	mark Mark
	day  time.Time
	figs *Evaluation
}

type totalsAt struct {
	generation int64
	at         time.Time
	totals     Totals
}

// TotalsTTL is how long the registry's totals are kept.
const TotalsTTL = time.Minute

// maxCachedEvaluations bounds the cache (a registry has a few hundred).
const maxCachedEvaluations = 4096

// NewService computes figures from source, as of now (time.Now when
// nil).
func NewService(source Source, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{source: source, now: now, evals: map[string]evalFigures{}}
}

// Evaluation returns an evaluation's figures, with or without the
// results another registry asserted without evidence.
func (s *Service) Evaluation(ctx context.Context, id string, asserted Asserted) (*Evaluation, error) {
	mark, err := s.source.Mark(ctx, id)
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	day := now.Truncate(24 * time.Hour)
	key := id
	if asserted == IncludeAsserted {
		key += "+asserted"
	}
	s.mu.Lock()
	f, ok := s.evals[key]
	s.mu.Unlock()
	if ok && f.mark == mark && f.day.Equal(day) {
		return f.figs, nil
	}
	v, err, _ := s.flight.Do("e:"+key, func() (any, error) {
		facts, err := s.source.Facts(ctx, id)
		if err != nil {
			return nil, err
		}
		figs := Summarize(facts, now, asserted)
		s.mu.Lock()
		if len(s.evals) >= maxCachedEvaluations {
			clear(s.evals)
		}
		// the facts may be newer than mark: keyed by the mark they were
		// read after, they are recomputed at the next view at worst
		s.evals[key] = evalFigures{mark: mark, day: day, figs: figs}
		s.mu.Unlock()
		return figs, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Evaluation), nil
}

// Totals returns the registry-wide counts as of at most TotalsTTL ago
// and the sync generation given, and when they were counted.
func (s *Service) Totals(ctx context.Context, generation int64) (Totals, time.Time, error) {
	now := s.now()
	s.mu.Lock()
	o := s.totals
	s.mu.Unlock()
	if o != nil && o.generation == generation && now.Sub(o.at) < TotalsTTL && !now.Before(o.at) {
		return o.totals, o.at, nil
	}
	v, err, _ := s.flight.Do("totals", func() (any, error) {
		t, err := s.source.Totals(ctx)
		if err != nil {
			return nil, err
		}
		o := &totalsAt{generation: generation, at: now, totals: t}
		s.mu.Lock()
		s.totals = o
		s.mu.Unlock()
		return o, nil
	})
	if err != nil {
		return Totals{}, time.Time{}, err
	}
	o = v.(*totalsAt)
	return o.totals, o.at, nil
}
