package metric

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkRequest is what a request costs the metrics, from many
// goroutines: a count and an observed latency, next to client_golang.
func BenchmarkRequest(b *testing.B) {
	buckets := []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	b.Run("metric", func(b *testing.B) {
		c := NewCounterVec("sip_requests_total", "R.", "route").WithLabelValues("/a")
		h := NewHistogramVec("sip_duration_seconds", "D.", buckets, "route").WithLabelValues("/a")
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.Inc()
				h.Observe(.003)
			}
		})
	})
	b.Run("client_golang", func(b *testing.B) {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sip_requests_total", Help: "R."}, []string{"route"}).WithLabelValues("/a")
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sip_duration_seconds", Help: "D.", Buckets: buckets}, []string{"route"}).WithLabelValues("/a")
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.Inc()
				h.Observe(.003)
			}
		})
	})
}
