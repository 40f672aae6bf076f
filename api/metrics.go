package api

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/stats"

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

	// byRoute keeps the collectors of each method, route and status seen,
	// so a request costs no label hashing or formatting. The map is
	// never modified: a new route replaces it with a copy (under
	// routeMu), so a request reads it without a lock.
	routeMu sync.Mutex
	byRoute atomic.Pointer[map[routeKey]routeMetrics]
}

type routeKey struct {
	method, route string
	status        int
}

type routeMetrics struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// maxRoutes bounds byRoute: methods are the client's to choose.
const maxRoutes = 1024

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
	k := routeKey{method, route, status}
	var r routeMetrics
	ok := false
	if byRoute := m.byRoute.Load(); byRoute != nil {
		r, ok = (*byRoute)[k]
	}
	if !ok {
		r = routeMetrics{m.requests.WithLabelValues(method, route, strconv.Itoa(status)), m.duration.WithLabelValues(method, route)}
		m.routeMu.Lock()
		old := m.byRoute.Load()
		if old == nil || len(*old) < maxRoutes {
			next := make(map[routeKey]routeMetrics, 1)
			if old != nil {
				next = maps.Clone(*old)
			}
			next[k] = r
			m.byRoute.Store(&next)
		}
		m.routeMu.Unlock()
	}
	r.requests.Inc()
	r.duration.Observe(elapsed.Seconds())
}

// Registry returns the Prometheus registry, so the program can add its own
// collectors (sync counts, the bot's queue) to /metrics.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.registry }

// jobCollector reads the judging queue when /metrics is scraped, so every
// replica reports the one queue they share.
type jobCollector struct {
	source *evaluation.Service
	now    func() time.Time
}

var (
	jobsDesc      = prometheus.NewDesc("sip_judge_jobs", "Judging jobs waiting for a worker, being judged, and failed for good.", []string{"status"}, nil)
	jobOldestDesc = prometheus.NewDesc("sip_judge_oldest_waiting_seconds", "How long the longest-waiting judging job has waited (0 when none waits).", nil, nil)
)

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc; ch <- jobOldestDesc }

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := c.source.JobStats(ctx)
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

// overviewCollector exports the registry's success metrics (the figures
// of /stats, as cached there) when /metrics is scraped.
type overviewCollector struct {
	server *Server
}

var (
	agentsDesc        = prometheus.NewDesc("sip_agents", "Agents registered with the registry.", nil, nil)
	agentsActiveDesc  = prometheus.NewDesc("sip_agents_registered_for_evaluation", "Agents registered for at least one evaluation (adoption's numerator).", nil, nil)
	adoptionDesc      = prometheus.NewDesc("sip_adoption_ratio", "Share of agents registered for at least one evaluation.", nil, nil)
	completionDesc    = prometheus.NewDesc("sip_completion_ratio", "Share of ended registrations that completed.", nil, nil)
	passRateDesc      = prometheus.NewDesc("sip_pass_ratio", "Share of graded attempts (passed, failed, expired) that passed.", nil, nil)
	outcomesDesc      = prometheus.NewDesc("sip_attempts", "Attempts that ended, by outcome (revoked results left out).", []string{"outcome"}, nil)
	openDesc          = prometheus.NewDesc("sip_registrations_open", "Registrations under way.", nil, nil)
	contributorsDesc  = prometheus.NewDesc("sip_contributors", "Distinct authors of the registry's SIPs.", nil, nil)
	evaluationsDesc   = prometheus.NewDesc("sip_evaluations", "Evaluation SIPs by module, and whether active.", []string{"module", "active"}, nil)
	modulesActiveDesc = prometheus.NewDesc("sip_modules_with_active_evaluations", "Modules with at least one active evaluation (module diversity).", nil, nil)
)

func (c *overviewCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{agentsDesc, agentsActiveDesc, adoptionDesc, completionDesc, passRateDesc, outcomesDesc,
		openDesc, contributorsDesc, evaluationsDesc, modulesActiveDesc} {
		ch <- d
	}
}

func (c *overviewCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	o, _, err := c.server.overview(ctx)
	if err != nil {
		c.server.log.Warn("metrics: counting the registry", "err", err)
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(agentsDesc, float64(o.Adoption.Of))
	gauge(agentsActiveDesc, float64(o.Adoption.N))
	for d, r := range map[*prometheus.Desc]stats.Rate{adoptionDesc: o.Adoption, completionDesc: o.Completion, passRateDesc: o.PassRate} {
		if r.Known() {
			gauge(d, r.Percent()/100)
		}
	}
	for _, oc := range o.Outcomes {
		gauge(outcomesDesc, float64(oc.N), string(oc.Outcome))
	}
	gauge(openDesc, float64(o.Open))
	gauge(contributorsDesc, float64(len(o.Contributors)))
	for _, m := range o.Modules {
		gauge(evaluationsDesc, float64(m.Active), m.Module, "true")
		gauge(evaluationsDesc, float64(m.Evaluations-m.Active), m.Module, "false")
	}
	gauge(modulesActiveDesc, float64(o.ActiveModules))
}
