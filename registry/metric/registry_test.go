package metric

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// text is what r serves.
func text(t *testing.T, r *Registry) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteText(context.Background(), &b); err != nil {
		t.Fatalf("WriteText: %v", err)
	}
	return b.String()
}

// promText is what client_golang serves for reg.
func promText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("client_golang: %v", err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// parse reads an exposition with Prometheus's own parser, which refuses
// what the text format does not allow.
func parse(t *testing.T, exposition string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, exposition)
	}
	return mfs
}

// TestWriteTextAsClientGolang: the same metrics, updated alike, are written
// byte for byte as client_golang writes them, and parse.
func TestWriteTextAsClientGolang(t *testing.T) {
	t.Parallel()
	buckets := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	for _, tc := range []struct {
		name string
		ours func(*Registry)
		prom func(*prometheus.Registry)
	}{
		{"counter", func(r *Registry) {
			c := NewCounter("sip_reloads_total", "Times reloaded.")
			r.Register(c)
			for range 3 {
				c.Inc()
			}
		}, func(r *prometheus.Registry) {
			c := prometheus.NewCounter(prometheus.CounterOpts{Name: "sip_reloads_total", Help: "Times reloaded."})
			r.MustRegister(c)
			c.Add(3)
		}},
		{"unused counter", func(r *Registry) {
			r.Register(NewCounter("sip_zero_total", "Never counted."))
		}, func(r *prometheus.Registry) {
			r.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "sip_zero_total", Help: "Never counted."}))
		}},
		{"counter vector, labels sorted by name and values", func(r *Registry) {
			c := NewCounterVec("sip_http_requests_total", "HTTP requests by method, route and status code.", "method", "route", "code")
			r.Register(c)
			for _, l := range [][]string{{"GET", "/b", "200"}, {"GET", "/a", "404"}, {"POST", "/a", "200"}, {"GET", "/a", "200"}, {"GET", "/a", "200"}} {
				c.WithLabelValues(l...).Inc()
			}
			r.Register(NewCounterVec("sip_unused_total", "A vector never used is left out.", "x"))
		}, func(r *prometheus.Registry) {
			c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sip_http_requests_total", Help: "HTTP requests by method, route and status code."}, []string{"method", "route", "code"})
			r.MustRegister(c)
			for _, l := range [][]string{{"GET", "/b", "200"}, {"GET", "/a", "404"}, {"POST", "/a", "200"}, {"GET", "/a", "200"}, {"GET", "/a", "200"}} {
				c.WithLabelValues(l...).Inc()
			}
			r.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sip_unused_total", Help: "A vector never used is left out."}, []string{"x"}))
		}},
		{"histogram vector, observations on and between bounds", func(r *Registry) {
			h := NewHistogramVec("sip_http_request_duration_seconds", "HTTP request latency by method and route.", buckets, "route", "method")
			r.Register(h)
			for _, v := range []float64{0, .0005, .0007, .001, 2.5, 3, 1e9, .3} {
				h.WithLabelValues("/a", "GET").Observe(v)
			}
			h.WithLabelValues("/b", "GET").Observe(.01)
		}, func(r *prometheus.Registry) {
			h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sip_http_request_duration_seconds", Help: "HTTP request latency by method and route.", Buckets: buckets}, []string{"route", "method"})
			r.MustRegister(h)
			for _, v := range []float64{0, .0005, .0007, .001, 2.5, 3, 1e9, .3} {
				h.WithLabelValues("/a", "GET").Observe(v)
			}
			h.WithLabelValues("/b", "GET").Observe(.01)
		}},
		{"gauges: numbers as client_golang formats them", func(r *Registry) {
			g := NewGauge("sip_g", "A gauge.")
			r.Register(g)
			d := NewGaugeDesc("sip_values", "Values.", "v")
			r.Register(CollectorFunc(func(_ context.Context, s *Scrape) {
				for i, v := range []float64{1, 0, -1, math.Copysign(0, -1), .1, 1e21, 123456789, 1.5e-7, math.Inf(1), math.Inf(-1), 9.223372036854776e18} {
					s.Value(d, v, string(rune('a'+i)))
				}
			}))
			g.Set(-2.5)
		}, func(r *prometheus.Registry) {
			g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "sip_g", Help: "A gauge."})
			r.MustRegister(g)
			v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sip_values", Help: "Values."}, []string{"v"})
			r.MustRegister(v)
			for i, x := range []float64{1, 0, -1, math.Copysign(0, -1), .1, 1e21, 123456789, 1.5e-7, math.Inf(1), math.Inf(-1), 9.223372036854776e18} {
				v.WithLabelValues(string(rune('a' + i))).Set(x)
			}
			g.Set(-2.5)
		}},
		{"escaping in help and label values", func(r *Registry) {
			d := NewGaugeDesc("sip_escaped", "A \\ help \"text\"\non two lines.", "module")
			r.Register(CollectorFunc(func(_ context.Context, s *Scrape) {
				s.Value(d, 1, "a \"quoted\" \\ value\nwith a line feed")
				s.Value(d, 2, "é ünïcode")
			}))
		}, func(r *prometheus.Registry) {
			g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sip_escaped", Help: "A \\ help \"text\"\non two lines."}, []string{"module"})
			r.MustRegister(g)
			g.WithLabelValues("a \"quoted\" \\ value\nwith a line feed").Set(1)
			g.WithLabelValues("é ünïcode").Set(2)
		}},
		{"one family from collectors that describe it alike", func(r *Registry) {
			for _, kind := range []string{"unreachable", "timeout"} {
				r.Register(CollectorFunc(func(_ context.Context, s *Scrape) {
					s.Value(NewCounterDesc("sip_outages_total", "Outages by kind.", "kind"), 0, kind)
				}))
			}
		}, func(r *prometheus.Registry) {
			for _, kind := range []string{"unreachable", "timeout"} {
				r.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sip_outages_total", Help: "Outages by kind.",
					ConstLabels: prometheus.Labels{"kind": kind}}, func() float64 { return 0 }))
			}
		}},
		{"families sorted by name", func(r *Registry) {
			r.Register(NewGauge("sip_b", "B."), NewGauge("sip_a", "A."), NewCounter("sip_a_total", "A total."))
		}, func(r *prometheus.Registry) {
			r.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "sip_b", Help: "B."}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "sip_a", Help: "A."}),
				prometheus.NewCounter(prometheus.CounterOpts{Name: "sip_a_total", Help: "A total."}))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours, theirs := NewRegistry(), prometheus.NewRegistry()
			tc.ours(ours)
			tc.prom(theirs)
			got, want := text(t, ours), promText(t, theirs)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("exposition differs from client_golang's (-client_golang +ours):\n%s", diff)
			}
			parse(t, got)
		})
	}
}

// TestGoAndProcessCollectors: the go_* and process_* families are
// client_golang's default ones, with their names, types and help texts,
// and the values that do not move agree.
func TestGoAndProcessCollectors(t *testing.T) {
	t.Parallel()
	ours := NewRegistry()
	ours.Register(GoCollector(), ProcessCollector())
	theirs := prometheus.NewRegistry()
	theirs.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	got, want := parse(t, text(t, ours)), parse(t, promText(t, theirs))
	type family struct {
		Type   dto.MetricType
		Help   string
		Labels string
	}
	shape := func(mfs map[string]*dto.MetricFamily) map[string]family {
		out := map[string]family{}
		for name, mf := range mfs {
			var labels []string
			for _, l := range mf.GetMetric()[0].GetLabel() {
				labels = append(labels, l.GetName())
			}
			out[name] = family{mf.GetType(), mf.GetHelp(), strings.Join(labels, ",")}
		}
		return out
	}
	if diff := cmp.Diff(shape(want), shape(got)); diff != "" {
		t.Errorf("go_* and process_* families differ from client_golang's (-client_golang +ours):\n%s", diff)
	}
	value := func(mfs map[string]*dto.MetricFamily, name string) float64 {
		mf := mfs[name]
		if mf == nil {
			return math.NaN()
		}
		m := mf.GetMetric()[0]
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue()
		case dto.MetricType_SUMMARY:
			return float64(m.GetSummary().GetSampleCount())
		}
		return m.GetGauge().GetValue()
	}
	for _, name := range []string{"process_start_time_seconds", "process_max_fds", "process_virtual_memory_max_bytes",
		"go_info", "go_gc_gogc_percent", "go_gc_gomemlimit_bytes", "go_sched_gomaxprocs_threads"} {
		if g, w := value(got, name), value(want, name); g != w {
			t.Errorf("%s = %v; client_golang says %v", name, g, w)
		}
	}
	if v := got["go_info"].GetMetric()[0].GetLabel()[0].GetValue(); !strings.HasPrefix(v, "go") {
		t.Errorf("go_info{version=%q}", v)
	}
	for _, name := range []string{"process_resident_memory_bytes", "process_open_fds", "process_virtual_memory_bytes", "go_goroutines", "go_threads", "go_memstats_sys_bytes"} {
		if v := value(got, name); !(v > 0) {
			t.Errorf("%s = %v; want more than 0", name, v)
		}
	}
}

// TestConcurrentUpdates: counters and histograms updated from many
// goroutines, some creating label combinations, while /metrics is
// scraped, lose no update (run with -race).
func TestConcurrentUpdates(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	requests := NewCounterVec("sip_requests_total", "Requests.", "route")
	duration := NewHistogramVec("sip_duration_seconds", "Duration.", []float64{.1, 1}, "route")
	gauge := NewGauge("sip_gauge", "Gauge.")
	r.Register(requests, duration, gauge)
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				route := []string{"/a", "/b", "/c"}[(g+i)%3]
				requests.WithLabelValues(route).Inc()
				duration.WithLabelValues(route).Observe(float64(i%3) / 2)
				gauge.Set(float64(i))
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			parse(t, text(t, r))
		}
	})
	wg.Wait()
	mfs := parse(t, text(t, r))
	var total, observed, sum float64
	for _, m := range mfs["sip_requests_total"].GetMetric() {
		total += m.GetCounter().GetValue()
	}
	for _, m := range mfs["sip_duration_seconds"].GetMetric() {
		h := m.GetHistogram()
		observed += float64(h.GetSampleCount())
		sum += h.GetSampleSum()
		if n := h.GetBucket()[len(h.GetBucket())-1].GetCumulativeCount(); n != h.GetSampleCount() {
			t.Errorf("the last bucket counts %d; the count is %d", n, h.GetSampleCount())
		}
	}
	if total != goroutines*each || observed != goroutines*each {
		t.Errorf("counted %v requests and observed %v; want %d", total, observed, goroutines*each)
	}
	var wantSum float64
	for range goroutines {
		for i := range each {
			wantSum += float64(i%3) / 2
		}
	}
	if sum != wantSum {
		t.Errorf("sum %v; want %v", sum, wantSum)
	}
}

// TestScrapeRefusesConflicts: a family described two ways, or a sample
// collected twice, fails the scrape (500) instead of serving an exposition
// Prometheus would refuse.
func TestScrapeRefusesConflicts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		collectors []Collector
		want       string
	}{
		{"two help texts", []Collector{NewGauge("sip_x", "One."), NewGauge("sip_x", "Two.")}, "two descriptions"},
		{"two types", []Collector{NewGauge("sip_x", "X."), NewCounter("sip_x", "X.")}, "two descriptions"},
		{"registered twice", func() []Collector { c := NewCounter("sip_x_total", "X."); return []Collector{c, c} }(), "sip_x_total is collected twice"},
		{"same labels twice", []Collector{CollectorFunc(func(_ context.Context, s *Scrape) {
			d := NewGaugeDesc("sip_y", "Y.", "a", "b")
			s.Value(d, 1, "1", "2")
			s.Value(d, 2, "1", "2")
		})}, `sip_y{a="1",b="2"} is collected twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			r.Register(tc.collectors...)
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("got %d %q; want 500 mentioning %q", rec.Code, rec.Body.String(), tc.want)
			}
		})
	}
}

// TestServeHTTP: the text format's media type, gzipped when the scraper
// asks for it (as Prometheus does).
func TestServeHTTP(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	c := NewCounter("sip_x_total", "X.")
	c.Inc()
	r.Register(c)
	const want = "# HELP sip_x_total X.\n# TYPE sip_x_total counter\nsip_x_total 1\n"
	for _, tc := range []struct {
		acceptEncoding string
		gzipped        bool
	}{
		{"", false},
		{"gzip", true},
		{"br, gzip;q=0.5", true},
		{"GZIP", true},
		{"*", true},
		{"gzip;q=0", false},
		{"identity", false},
		{"br, deflate", false},
	} {
		t.Run(tc.acceptEncoding, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept-Encoding", tc.acceptEncoding)
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			body := rec.Body.Bytes()
			if gotGzip := rec.Header().Get("Content-Encoding") == "gzip"; gotGzip != tc.gzipped {
				t.Fatalf("gzipped %v; want %v", gotGzip, tc.gzipped)
			}
			if tc.gzipped {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if string(body) != want {
				t.Errorf("got %q; want %q", body, want)
			}
		})
	}
}

// TestMisuse: wrong label counts, names and buckets panic where the
// metric is made or used, as they are mistakes in the program.
func TestMisuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"too few label values", func() { NewCounterVec("sip_x_total", "X.", "a", "b").WithLabelValues("1") }},
		{"too many label values", func() {
			(&Scrape{}).Value(NewGaugeDesc("sip_x", "X."), 1, "extra")
		}},
		{"invalid metric name", func() { NewGauge("sip-x", "X.") }},
		{"name starting with a digit", func() { NewGauge("1sip", "X.") }},
		{"invalid label name", func() { NewCounterVec("sip_x_total", "X.", "a:b") }},
		{"reserved label name", func() { NewCounterVec("sip_x_total", "X.", "__name") }},
		{"le as a label", func() { NewHistogramVec("sip_x", "X.", []float64{1}, "le") }},
		{"repeated label", func() { NewCounterVec("sip_x_total", "X.", "a", "a") }},
		{"unsorted buckets", func() { NewHistogramVec("sip_x", "X.", []float64{1, .5}) }},
		{"repeated bucket", func() { NewHistogramVec("sip_x", "X.", []float64{1, 1}) }},
		{"infinite bucket", func() { NewHistogramVec("sip_x", "X.", []float64{1, math.Inf(1)}) }},
		{"no buckets", func() { NewHistogramVec("sip_x", "X.", nil) }},
		{"a histogram as a value", func() {
			(&Scrape{}).Value(newDesc("sip_x", "X.", typeHistogram, nil), 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			tc.f()
		})
	}
}
