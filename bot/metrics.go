package bot

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry/metric"
)

// botMetrics are the App's Prometheus metrics: intake outcomes,
// processing outcomes and durations, the inbox by status, and GitHub's
// answers and rate limit.
type botMetrics struct {
	webhooks   *metric.CounterVec
	processed  *metric.CounterVec
	duration   *metric.HistogramVec
	requests   *metric.CounterVec
	rateRemain *metric.Gauge
	refused    *metric.Gauge
	unverified *metric.Gauge
	overrides  *metric.Counter
	autoMerges *metric.Counter
	inbox      *inboxCollector
}

func newBotMetrics(store inbox.Store) *botMetrics {
	return &botMetrics{
		webhooks: metric.NewCounterVec("sip_github_webhooks_total",
			"Webhook deliveries received, by event and outcome (queued, duplicate, ignored, unauthorized, bad_request, too_large, error).",
			"event", "outcome"),
		processed: metric.NewCounterVec("sip_github_deliveries_processed_total",
			"Delivery processing attempts, by event and outcome (done, retry, dead, panic).", "event", "outcome"),
		duration: metric.NewHistogramVec("sip_github_delivery_duration_seconds", "Time to process a delivery, by event.",
			[]float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}, "event"),
		requests: metric.NewCounterVec("sip_github_api_requests_total",
			"Requests to GitHub, by status code (0 for a transport error).", "code"),
		rateRemain: metric.NewGauge("sip_github_rate_limit_remaining", "X-RateLimit-Remaining of GitHub's latest answer."),
		refused: metric.NewGauge("sip_registry_sync_refused",
			"1 while the registry is behind its default branch because this replica's latest sync of it was refused; 0 once a sync succeeds."),
		unverified: metric.NewGauge("sip_github_main_unverified",
			"1 while a commit of the followed default branch that the policy would have refused is neither reverted nor overridden (the registry does not sync past it); 0 once every commit is verified."),
		overrides: metric.NewCounter("sip_github_overrides_total",
			"Overrides of the policy recorded (/sip override), on pull requests and on refused commits."),
		autoMerges: metric.NewCounter("sip_github_auto_merges_total", "Safe edits (auto_merge) the App merged."),
		inbox: &inboxCollector{store: store,
			deliveries: metric.NewGaugeDesc("sip_github_inbox_deliveries", "Deliveries in the inbox, by status.", "status"),
			oldest:     metric.NewGaugeDesc("sip_github_inbox_oldest_pending_seconds", "Age of the oldest pending delivery."),
		},
	}
}

func (m *botMetrics) collectors() []metric.Collector {
	return []metric.Collector{m.webhooks, m.processed, m.duration, m.requests, m.rateRemain, m.refused, m.unverified, m.overrides, m.autoMerges, m.inbox}
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
type inboxCollector struct {
	store              inbox.Store
	deliveries, oldest *metric.Desc
}

func (c *inboxCollector) Collect(ctx context.Context, s *metric.Scrape) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := c.store.DeliveryStats(ctx)
	if err != nil {
		return
	}
	for status, n := range map[string]int{"pending": st.Pending, "processing": st.Processing, "done": st.Done, "dead": st.Dead} {
		s.Value(c.deliveries, float64(n), status)
	}
	age := 0.0
	if !st.OldestPending.IsZero() {
		age = time.Since(st.OldestPending).Seconds()
	}
	s.Value(c.oldest, age)
}
