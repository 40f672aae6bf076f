package api_test

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/ratelimit"
)

// TestRateLimitsSharedByReplicas: two servers ("replicas") on one
// PostgreSQL schema, each with its own store and its limits in the
// database, let one address register no more agents in total than one
// server would, even when its requests race on both; the next window
// lets it register again.
func TestRateLimitsSharedByReplicas(t *testing.T) {
	t.Parallel()
	const limit = 4
	url := postgrestest.URL(t)
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC)}
	var replicas []*apitest.Client
	for range 2 {
		st := postgrestest.OpenURL(t, url)
		srv := httptest.NewServer(api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(st), PublicRate: limit, Now: clk.Now,
			Limiter: ratelimit.NewShared(st, clk.Now), Logger: slog.New(slog.DiscardHandler)}, runtimeStores{Agents: st})))
		t.Cleanup(srv.Close)
		replicas = append(replicas, apitest.New(t, srv.URL))
	}
	register := func(c *apitest.Client, name string) (int, string) {
		resp := c.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"`+name+`"}`), jsonHeader, nil)
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}

	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range 3 * limit {
		wg.Go(func() {
			code, retry := register(replicas[i%2], fmt.Sprintf("shared-%d", i))
			mu.Lock()
			defer mu.Unlock()
			codes[code]++
			// The window is [12:00, 12:01): 30 seconds are left.
			if n, _ := strconv.Atoi(retry); code == 429 && (n < 30 || n > 31) {
				t.Errorf("Retry-After %q, want the 30 s left of the window", retry)
			}
		})
	}
	wg.Wait()
	if codes[201] != limit || codes[429] != 2*limit {
		t.Errorf("%d registrations from one address on two replicas: %v; want %d created, the rest 429", 3*limit, codes, limit)
	}

	clk.Advance(time.Minute)
	for i, c := range replicas {
		if code, _ := register(c, fmt.Sprintf("next-%d", i)); code != 201 {
			t.Errorf("replica %d, the next minute: %d, want 201", i, code)
		}
	}
}
