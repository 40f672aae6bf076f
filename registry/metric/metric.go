// Package metric keeps a program's metrics (counters, gauges, histograms
// with fixed buckets, and values read when scraped) and serves them in
// Prometheus's text exposition format, version 0.0.4.
//
// It does, for sip, what prometheus/client_golang did, and writes the same
// text: families sorted by name, a family's samples by their label values,
// label names in alphabetical order, and numbers as Go's shortest 'g'
// format. Unlike client_golang it costs nothing when the program starts: no
// package initialisation, no protobuf, no file read before the first
// scrape. Every type is safe for use by many goroutines.
package metric

import (
	"context"
	"fmt"
	"slices"
)

// Desc describes a family of metrics: its name, help text, type and label
// names.
type Desc struct {
	name, help, typ string
	labels          []string
	// order lists the indexes of labels in alphabetical order of their
	// names, the order they are written and sorted in.
	order []int
}

// The metric types of the exposition format.
const (
	typeCounter   = "counter"
	typeGauge     = "gauge"
	typeHistogram = "histogram"
	typeSummary   = "summary"
)

// NewCounterDesc describes a counter family for a Collector.
func NewCounterDesc(name, help string, labels ...string) *Desc {
	return newDesc(name, help, typeCounter, labels)
}

// NewGaugeDesc describes a gauge family for a Collector.
func NewGaugeDesc(name, help string, labels ...string) *Desc {
	return newDesc(name, help, typeGauge, labels)
}

func newDesc(name, help, typ string, labels []string) *Desc {
	if !validName(name, true) {
		panic(fmt.Sprintf("metric: invalid metric name %q", name))
	}
	order := make([]int, len(labels))
	for i, l := range labels {
		if !validName(l, false) || l == "le" || l == "quantile" || slices.Contains(labels[:i], l) {
			panic(fmt.Sprintf("metric: %s: invalid or repeated label name %q", name, l))
		}
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if labels[a] < labels[b] {
			return -1
		}
		return 1
	})
	return &Desc{name: name, help: help, typ: typ, labels: slices.Clone(labels), order: order}
}

// validName: [a-zA-Z_:][a-zA-Z0-9_:]* for a metric, without the colons
// and not starting with __ for a label.
func validName(s string, metric bool) bool {
	if s == "" || (!metric && len(s) > 1 && s[:2] == "__") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (i > 0 && '0' <= c && c <= '9') || (metric && c == ':')
		if !ok {
			return false
		}
	}
	return true
}

func (d *Desc) checkLabels(values []string) {
	if len(values) != len(d.labels) {
		panic(fmt.Sprintf("metric: %s has labels %q; got %d values", d.name, d.labels, len(values)))
	}
}

// A Collector adds its samples to a scrape: the Registry calls Collect for
// every scrape of /metrics, so a collector can read a value when it is
// asked for (a queue's length in the database, say) rather than keep it.
type Collector interface {
	Collect(ctx context.Context, s *Scrape)
}

// CollectorFunc is a function that collects.
type CollectorFunc func(ctx context.Context, s *Scrape)

// Collect calls f.
func (f CollectorFunc) Collect(ctx context.Context, s *Scrape) { f(ctx, s) }

// Scrape gathers the samples of one scrape, family by family.
type Scrape struct {
	families map[string]*family
	err      error
}

type family struct {
	desc    *Desc
	samples []sample
}

// sample is one metric of a family: a counter's or gauge's value, or a
// histogram's or summary's buckets (le or quantile), sum and count.
type sample struct {
	labels  []string // values, in the order of desc.labels
	value   float64
	buckets []bucket
	sum     float64
	count   uint64
}

type bucket struct {
	bound float64 // le, or the quantile
	value float64 // the cumulative count, or the quantile's value
}

// Value adds a counter's or gauge's value, with the values of d's labels in
// the order d names them. It panics when their number is not d's.
func (s *Scrape) Value(d *Desc, v float64, labelValues ...string) {
	if d.typ != typeCounter && d.typ != typeGauge {
		panic(fmt.Sprintf("metric: %s is a %s, not a counter or gauge", d.name, d.typ))
	}
	d.checkLabels(labelValues)
	s.add(d, sample{labels: slices.Clone(labelValues), value: v})
}

func (s *Scrape) add(d *Desc, smp sample) {
	if s.families == nil {
		s.families = map[string]*family{}
	}
	f := s.families[d.name]
	if f == nil {
		f = &family{desc: d}
		s.families[d.name] = f
	} else if f.desc != d && !sameDesc(f.desc, d) {
		if s.err == nil {
			s.err = fmt.Errorf("metric: %s is collected with two descriptions (%s %q %q, %s %q %q)",
				d.name, f.desc.typ, f.desc.help, f.desc.labels, d.typ, d.help, d.labels)
		}
		return
	}
	f.samples = append(f.samples, smp)
}

func sameDesc(a, b *Desc) bool {
	return a.help == b.help && a.typ == b.typ && slices.Equal(a.labels, b.labels)
}
