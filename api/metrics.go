package api

import (
	"context"
	"strconv"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus collectors, on a registry of its own
// (not the global one), so two servers in one test do not collide.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	reloads  prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sip_http_requests_total", Help: "HTTP requests by method, route and status code.",
		}, []string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sip_http_request_duration_seconds", Help: "HTTP request latency by method and route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"method", "route"}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sip_catalog_reloads_total", Help: "Times the API reloaded the registry after a sync.",
		}),
	}
	m.registry.MustRegister(m.requests, m.duration, m.reloads,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(method, route string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(elapsed.Seconds())
}

// Registry returns the Prometheus registry, so the program can add its own
// collectors (sync counts, the bot's queue) to /metrics.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.registry }

// jobStatser is what the job collector reads.
type jobStatser interface {
	JobStats(ctx context.Context) (evaluation.JobStats, error)
}

// jobCollector reads the judging queue when /metrics is scraped, so every
// replica reports the one queue they share.
type jobCollector struct {
	store jobStatser
	now   func() time.Time
}

var (
	jobsDesc      = prometheus.NewDesc("sip_judge_jobs", "Judging jobs waiting for a worker, being judged, and failed for good.", []string{"status"}, nil)
	jobOldestDesc = prometheus.NewDesc("sip_judge_oldest_waiting_seconds", "How long the longest-waiting judging job has waited (0 when none waits).", nil, nil)
)

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc; ch <- jobOldestDesc }

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := c.store.JobStats(ctx)
	if err != nil {
		return
	}
	for status, n := range map[string]int{"waiting": st.Waiting, "judging": st.Judging, "failed": st.Failed} {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), status)
	}
	age := 0.0
	if !st.OldestWaiting.IsZero() {
		age = max(c.now().Sub(st.OldestWaiting).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(jobOldestDesc, prometheus.GaugeValue, age)
}
