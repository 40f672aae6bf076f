package api_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

// TestReadsDuringSyncs: lists (the default and over 256 other queries,
// past the cache's bound) and requests with ever new methods (new metric
// routes) run from many goroutines while syncs land. A list asked after
// a sync returned always shows it (the snapshot and list cache are read
// without a lock), and /metrics counts every request (no update lost to
// the copy-on-write route map). Run with -race.
func TestReadsDuringSyncs(t *testing.T) {
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			files := fixture()
			syncFiles(t, s, "c0", files...)
			srv := api.NewServer(api.Config{Catalog: registry.NewCatalog(s), Logger: slog.New(slog.DiscardHandler)})
			serve := func(method, target string) (int, string) {
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, httptest.NewRequest(method, target, nil))
				return w.Code, w.Body.String()
			}
			const goroutines, rounds, syncs = 6, 100, 5
			base := int64(len(files))
			var synced atomic.Int64 // the SIPs of the last sync that returned
			synced.Store(base)
			var lists, others atomic.Int64
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range rounds {
						want := synced.Load()
						code, body := serve(http.MethodGet, "/api/v1/evaluations?status=all")
						lists.Add(1)
						if code != http.StatusOK {
							t.Errorf("list: %d %s", code, body)
							return
						}
						if want > base && !strings.Contains(body, fmt.Sprintf(`"sip":%d,`, want)) {
							t.Errorf("a list asked after the sync of SIP %d returned does not show it", want)
							return
						}
						serve(http.MethodGet, fmt.Sprintf("/api/v1/evaluations?module=m%d", g*rounds+i))
						serve(fmt.Sprintf("M%d", (g*rounds+i)%700), "/api/v1/evaluations")
						others.Add(2)
					}
				})
			}
			for n := int(base) + 1; n <= int(base)+syncs; n++ {
				files = append(files, siptest.SIP(n, "e"+strconv.Itoa(n), "active"))
				syncFiles(t, s, "c"+strconv.Itoa(n), files...)
				synced.Store(int64(n))
			}
			wg.Wait()
			code, body := serve(http.MethodGet, "/metrics")
			if code != http.StatusOK {
				t.Fatalf("/metrics: %d", code)
			}
			var total int64
			for _, m := range regexp.MustCompile(`(?m)^sip_http_requests_total\{[^}]*\} (\d+)$`).FindAllStringSubmatch(body, -1) {
				n, _ := strconv.ParseInt(m[1], 10, 64)
				total += n
			}
			if want := lists.Load() + others.Load(); total != want {
				t.Errorf("/metrics counts %d requests; want %d", total, want)
			}
		})
	}
}
