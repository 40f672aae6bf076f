package metric

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Counter counts up from zero.
type Counter struct {
	desc *Desc // nil for a CounterVec's child
	n    atomic.Uint64
}

// NewCounter returns a counter without labels.
func NewCounter(name, help string) *Counter {
	return &Counter{desc: newDesc(name, help, typeCounter, nil)}
}

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Value is the count so far.
func (c *Counter) Value() float64 { return float64(c.n.Load()) }

// Collect adds the counter to a scrape.
func (c *Counter) Collect(_ context.Context, s *Scrape) { s.Value(c.desc, c.Value()) }

// Gauge is a value that goes up and down.
type Gauge struct {
	desc *Desc
	bits atomic.Uint64
}

// NewGauge returns a gauge without labels, at zero.
func NewGauge(name, help string) *Gauge {
	return &Gauge{desc: newDesc(name, help, typeGauge, nil)}
}

// Set sets the gauge to v.
func (g *Gauge) Set(v float64) { g.bits.Store(math.Float64bits(v)) }

// Value is the gauge's value.
func (g *Gauge) Value() float64 { return math.Float64frombits(g.bits.Load()) }

// Collect adds the gauge to a scrape.
func (g *Gauge) Collect(_ context.Context, s *Scrape) { s.Value(g.desc, g.Value()) }

// Histogram counts observations in buckets with fixed upper bounds (le),
// and keeps their sum.
type Histogram struct {
	bounds []float64       // ascending, without +Inf
	counts []atomic.Uint64 // one for each bound, then +Inf
	sum    atomic.Uint64   // float64 bits
}

func newHistogram(bounds []float64) *Histogram {
	return &Histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe counts v in the first bucket whose bound is at least v.
func (h *Histogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v)
	h.counts[i].Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// sample is the histogram's cumulative buckets, sum and count. The count
// is the +Inf bucket's, so a scrape during an observation stays
// consistent; the sum may already include it or not yet.
func (h *Histogram) sample(labels []string) sample {
	s := sample{labels: labels, buckets: make([]bucket, len(h.bounds)), sum: math.Float64frombits(h.sum.Load())}
	var n uint64
	for i, b := range h.bounds {
		n += h.counts[i].Load()
		s.buckets[i] = bucket{bound: b, value: float64(n)}
	}
	s.count = n + h.counts[len(h.bounds)].Load()
	return s
}

// vec holds the children of a labelled family, one for each combination
// of label values.
type vec[M any] struct {
	desc     *Desc
	newChild func() M
	mu       sync.RWMutex
	children map[string]child[M]
}

type child[M any] struct {
	labels []string
	metric M
}

func (v *vec[M]) with(values []string) M {
	v.desc.checkLabels(values)
	key := strings.Join(values, "\xff")
	v.mu.RLock()
	c, ok := v.children[key]
	v.mu.RUnlock()
	if ok {
		return c.metric
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.children[key]; ok {
		return c.metric
	}
	if v.children == nil {
		v.children = map[string]child[M]{}
	}
	c = child[M]{labels: slices.Clone(values), metric: v.newChild()}
	v.children[key] = c
	return c.metric
}

func (v *vec[M]) each(f func(labels []string, m M)) {
	v.mu.RLock()
	children := make([]child[M], 0, len(v.children))
	for _, c := range v.children {
		children = append(children, c)
	}
	v.mu.RUnlock()
	for _, c := range children {
		f(c.labels, c.metric)
	}
}

// CounterVec is a counter for each combination of label values.
type CounterVec struct{ v vec[*Counter] }

// NewCounterVec returns a labelled counter family; a combination of label
// values appears at its first use.
func NewCounterVec(name, help string, labels ...string) *CounterVec {
	return &CounterVec{vec[*Counter]{desc: newDesc(name, help, typeCounter, labels), newChild: func() *Counter { return &Counter{} }}}
}

// WithLabelValues is the counter of these label values, in the order the
// family names its labels. It panics when their number is wrong.
func (c *CounterVec) WithLabelValues(values ...string) *Counter { return c.v.with(values) }

// Collect adds every counter of the family to a scrape.
func (c *CounterVec) Collect(_ context.Context, s *Scrape) {
	c.v.each(func(labels []string, m *Counter) { s.add(c.v.desc, sample{labels: labels, value: m.Value()}) })
}

// HistogramVec is a histogram for each combination of label values, all
// with the same buckets.
type HistogramVec struct{ v vec[*Histogram] }

// NewHistogramVec returns a labelled histogram family with these upper
// bounds (ascending; +Inf is added).
func NewHistogramVec(name, help string, buckets []float64, labels ...string) *HistogramVec {
	if len(buckets) == 0 || !slices.IsSorted(buckets) || slices.ContainsFunc(buckets, func(b float64) bool { return math.IsNaN(b) || math.IsInf(b, 0) }) ||
		len(slices.Compact(slices.Clone(buckets))) != len(buckets) {
		panic(fmt.Sprintf("metric: %s: buckets %v are not ascending finite bounds", name, buckets))
	}
	bounds := slices.Clone(buckets)
	return &HistogramVec{vec[*Histogram]{desc: newDesc(name, help, typeHistogram, labels), newChild: func() *Histogram { return newHistogram(bounds) }}}
}

// WithLabelValues is the histogram of these label values, in the order the
// family names its labels. It panics when their number is wrong.
func (h *HistogramVec) WithLabelValues(values ...string) *Histogram { return h.v.with(values) }

// Collect adds every histogram of the family to a scrape.
func (h *HistogramVec) Collect(_ context.Context, s *Scrape) {
	h.v.each(func(labels []string, m *Histogram) { s.add(h.v.desc, m.sample(labels)) })
}
