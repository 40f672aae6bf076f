package bot

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sipregistry/sip/bot/inbox"
)

// botMetrics are the App's Prometheus collectors: intake outcomes,
// processing outcomes and durations, the inbox by status, and GitHub's
// answers and rate limit.
type botMetrics struct {
	webhooks   *prometheus.CounterVec
	processed  *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	requests   *prometheus.CounterVec
	rateRemain prometheus.Gauge
	refused    prometheus.Gauge
	unverified prometheus.Gauge
	overrides  prometheus.Counter
	autoMerges prometheus.Counter
	inbox      *inboxCollector
}

func newBotMetrics(store inbox.Store) *botMetrics {
	m := &botMetrics{
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sip_github_webhooks_total", Help: "Webhook deliveries received, by event and outcome (queued, duplicate, ignored, unauthorized, bad_request, too_large, error).",
		}, []string{"event", "outcome"}),
		processed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sip_github_deliveries_processed_total", Help: "Delivery processing attempts, by event and outcome (done, retry, dead, panic).",
		}, []string{"event", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sip_github_delivery_duration_seconds", Help: "Time to process a delivery, by event.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"event"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sip_github_api_requests_total", Help: "Requests to GitHub, by status code (0 for a transport error).",
		}, []string{"code"}),
		rateRemain: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sip_github_rate_limit_remaining", Help: "X-RateLimit-Remaining of GitHub's latest answer.",
		}),
		refused: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sip_registry_sync_refused", Help: "1 while the registry is behind its default branch because this replica's latest sync of it was refused; 0 once a sync succeeds.",
		}),
		unverified: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sip_github_main_unverified", Help: "1 while a commit of the followed default branch that the policy would have refused is neither reverted nor overridden (the registry does not sync past it); 0 once every commit is verified.",
		}),
		overrides: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sip_github_overrides_total", Help: "Overrides of the policy recorded (/sip override), on pull requests and on refused commits.",
		}),
		autoMerges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sip_github_auto_merges_total", Help: "Safe edits (auto_merge) the App merged.",
		}),
	}
	m.inbox = &inboxCollector{store: store}
	return m
}

func (m *botMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.webhooks, m.processed, m.duration, m.requests, m.rateRemain, m.refused, m.unverified, m.overrides, m.autoMerges, m.inbox}
}

func (m *botMetrics) webhook(event, outcome string) { m.webhooks.WithLabelValues(event, outcome).Inc() }

// transport counts GitHub's answers and records the rate limit.
func (m *botMetrics) transport(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(r)
		if err != nil {
			m.requests.WithLabelValues("0").Inc()
			return resp, err
		}
		m.requests.WithLabelValues(strconv.Itoa(resp.StatusCode)).Inc()
		if v, err := strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining")); err == nil {
			m.rateRemain.Set(float64(v))
		}
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// inboxCollector reads the inbox's counts when /metrics is scraped.
type inboxCollector struct{ store inbox.Store }

var (
	inboxDesc  = prometheus.NewDesc("sip_github_inbox_deliveries", "Deliveries in the inbox, by status.", []string{"status"}, nil)
	oldestDesc = prometheus.NewDesc("sip_github_inbox_oldest_pending_seconds", "Age of the oldest pending delivery.", nil, nil)
)

func (c *inboxCollector) Describe(ch chan<- *prometheus.Desc) { ch <- inboxDesc; ch <- oldestDesc }

func (c *inboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := c.store.DeliveryStats(ctx)
	if err != nil {
		return
	}
	for status, n := range map[string]int{"pending": st.Pending, "processing": st.Processing, "done": st.Done, "dead": st.Dead} {
		ch <- prometheus.MustNewConstMetric(inboxDesc, prometheus.GaugeValue, float64(n), status)
	}
	age := 0.0
	if !st.OldestPending.IsZero() {
		age = time.Since(st.OldestPending).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age)
}
