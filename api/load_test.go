package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

// load hits url from workers goroutines for d and returns the request
// rate and the 50th and 99th percentile latencies.
func load(b *testing.B, url string, workers int, d time.Duration) (rps float64, p50, p99 time.Duration) {
	tr := &http.Transport{MaxIdleConns: workers, MaxIdleConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for range workers {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 4096)
			for time.Now().Before(deadline) {
				start := time.Now()
				resp, err := client.Get(url)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
				lat = append(lat, time.Since(start))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(all)
	if len(all) == 0 {
		b.Fatal("no requests completed")
	}
	return float64(len(all)) / d.Seconds(), all[len(all)/2], all[len(all)*99/100]
}

// BenchmarkListEvaluations serves GET /api/v1/evaluations with 50 SIPs
// from each store under load, and the floor: a bare echo handler that
// returns the same body, precomputed.
func BenchmarkListEvaluations(b *testing.B) {
	const workers, d = 16, 3 * time.Second
	files := siptest.Generate(50, 5)
	var body []byte
	for _, name := range []string{"sqlite", "floor", "postgres"} {
		b.Run(name, func(b *testing.B) {
			var h http.Handler
			if name == "floor" {
				e := echo.New()
				e.GET("/api/v1/evaluations", func(c echo.Context) error { return c.JSONBlob(http.StatusOK, body) })
				h = e
			} else {
				s := backends[name](b)
				if _, err := registry.Sync(b.Context(), s, registry.Source{Files: files, Commit: "c1", Name: "bench"}, time.Now()); err != nil {
					b.Fatal(err)
				}
				h = api.NewServer(api.Config{Store: s, Logger: slog.New(slog.DiscardHandler)})
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			url := srv.URL + "/api/v1/evaluations"
			if body == nil && name != "floor" {
				resp, err := http.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				body, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			for b.Loop() {
				rps, p50, p99 := load(b, url, workers, d)
				b.ReportMetric(rps, "req/s")
				b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
			}
		})
	}
}
