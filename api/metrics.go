package api

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/metric"
	"github.com/sipregistry/sip/registry/stats"
)

// metrics are the server's Prometheus metrics, on a registry of its own,
// so two servers in one test do not collide.
type metrics struct {
	registry *metric.Registry
	requests *metric.CounterVec
	duration *metric.HistogramVec
	reloads  *metric.Counter

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
	requests *metric.Counter
	duration *metric.Histogram
}

// maxRoutes bounds byRoute: methods are the client's to choose.
const maxRoutes = 1024

func newMetrics() *metrics {
	m := &metrics{
		registry: metric.NewRegistry(),
		requests: metric.NewCounterVec("sip_http_requests_total", "HTTP requests by method, route and status code.",
			"method", "route", "code"),
		duration: metric.NewHistogramVec("sip_http_request_duration_seconds", "HTTP request latency by method and route.",
			[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}, "method", "route"),
		reloads: metric.NewCounter("sip_catalog_reloads_total", "Times the API reloaded the registry after a sync."),
	}
	m.registry.Register(m.requests, m.duration, m.reloads, metric.GoCollector(), metric.ProcessCollector())
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

// Registry returns the registry /metrics serves, so the program can add
// its own collectors (the GitHub App's, the judge's) to it.
func (s *Server) Registry() *metric.Registry { return s.metrics.registry }

// jobCollector reads the judging queue when /metrics is scraped, so every
// replica reports the one queue they share.
type jobCollector struct {
	source      *evaluation.Service
	now         func() time.Time
	jobs, since *metric.Desc
}

func newJobCollector(source *evaluation.Service, now func() time.Time) *jobCollector {
	return &jobCollector{source: source, now: now,
		jobs:  metric.NewGaugeDesc("sip_judge_jobs", "Judging jobs waiting for a worker, being judged, and failed for good.", "status"),
		since: metric.NewGaugeDesc("sip_judge_oldest_waiting_seconds", "How long the longest-waiting judging job has waited (0 when none waits)."),
	}
}

func (c *jobCollector) Collect(ctx context.Context, s *metric.Scrape) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := c.source.JobStats(ctx)
	if err != nil {
		return
	}
	for status, n := range map[string]int{"waiting": st.Waiting, "judging": st.Judging, "failed": st.Failed} {
		s.Value(c.jobs, float64(n), status)
	}
	age := 0.0
	if !st.OldestWaiting.IsZero() {
		age = max(c.now().Sub(st.OldestWaiting).Seconds(), 0)
	}
	s.Value(c.since, age)
}

// overviewCollector exports the registry's success metrics (the figures
// of /stats, as cached there) when /metrics is scraped.
type overviewCollector struct {
	server *Server
	agents, agentsActive, adoption, completion, passRate, outcomes,
	open, contributors, evaluations, modulesActive *metric.Desc
}

func newOverviewCollector(server *Server) *overviewCollector {
	return &overviewCollector{server: server,
		agents:        metric.NewGaugeDesc("sip_agents", "Agents registered with the registry."),
		agentsActive:  metric.NewGaugeDesc("sip_agents_registered_for_evaluation", "Agents registered for at least one evaluation (adoption's numerator)."),
		adoption:      metric.NewGaugeDesc("sip_adoption_ratio", "Share of agents registered for at least one evaluation."),
		completion:    metric.NewGaugeDesc("sip_completion_ratio", "Share of ended registrations that completed."),
		passRate:      metric.NewGaugeDesc("sip_pass_ratio", "Share of graded attempts (passed, failed, expired) that passed."),
		outcomes:      metric.NewGaugeDesc("sip_attempts", "Attempts that ended, by outcome (revoked results left out).", "outcome"),
		open:          metric.NewGaugeDesc("sip_registrations_open", "Registrations under way."),
		contributors:  metric.NewGaugeDesc("sip_contributors", "Distinct authors of the registry's SIPs."),
		evaluations:   metric.NewGaugeDesc("sip_evaluations", "Evaluation SIPs by module, and whether active.", "module", "active"),
		modulesActive: metric.NewGaugeDesc("sip_modules_with_active_evaluations", "Modules with at least one active evaluation (module diversity)."),
	}
}

func (c *overviewCollector) Collect(ctx context.Context, s *metric.Scrape) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	o, _, err := c.server.overview(ctx)
	if err != nil {
		c.server.log.Warn("metrics: counting the registry", "err", err)
		return
	}
	s.Value(c.agents, float64(o.Adoption.Of))
	s.Value(c.agentsActive, float64(o.Adoption.N))
	for d, r := range map[*metric.Desc]stats.Rate{c.adoption: o.Adoption, c.completion: o.Completion, c.passRate: o.PassRate} {
		if r.Known() {
			s.Value(d, r.Percent()/100)
		}
	}
	for _, oc := range o.Outcomes {
		s.Value(c.outcomes, float64(oc.N), string(oc.Outcome))
	}
	s.Value(c.open, float64(o.Open))
	s.Value(c.contributors, float64(len(o.Contributors)))
	for _, m := range o.Modules {
		s.Value(c.evaluations, float64(m.Active), m.Module, "true")
		s.Value(c.evaluations, float64(m.Evaluations-m.Active), m.Module, "false")
	}
	s.Value(c.modulesActive, float64(o.ActiveModules))
}
