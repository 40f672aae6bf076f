package api_test

import (
	"context"
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
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
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
		srv := httptest.NewServer(api.NewServer(withRuntime(api.Config{Store: st, PublicRate: limit, Now: clk.Now,
			Limiter: api.NewSharedLimiter(st, clk.Now), Logger: slog.New(slog.DiscardHandler)}, runtimeStores{Agents: st})))
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

// windowCounter is a HitCounter that remembers the windows it was asked
// about and counts like the database would.
type windowCounter struct {
	start, end time.Time
	n          map[string]int64
}

func (w *windowCounter) CountHit(_ context.Context, key string, start, end time.Time) (int64, error) {
	w.start, w.end = start, end
	w.n[key+start.String()]++
	return w.n[key+start.String()], nil
}

// TestSharedLimiterWindows: a limit becomes windows of Burst requests,
// Burst/PerMinute minutes long, aligned so every replica agrees, and the
// wait is what is left of the window.
func TestSharedLimiterWindows(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 31, 500_000_000, time.UTC)
	for _, tc := range []struct {
		limit  api.Limit
		window time.Duration
	}{
		{api.Limit{Name: "registrations", PerMinute: 20, Burst: 20}, time.Minute},
		{api.Limit{Name: "agent-posts", PerMinute: 600, Burst: 60}, 6 * time.Second},
		{api.Limit{Name: "session-posts", PerMinute: 3000, Burst: 600}, 12 * time.Second},
		{api.Limit{Name: "fast", PerMinute: 6000, Burst: 1}, time.Second}, // never under a second
		{api.Limit{Name: "unset", PerMinute: 0, Burst: 5}, time.Minute},
	} {
		t.Run(tc.limit.Name, func(t *testing.T) {
			c := &windowCounter{n: map[string]int64{}}
			l := api.NewSharedLimiter(c, func() time.Time { return now })
			for i := range tc.limit.Burst + 1 {
				ok, wait, err := l.Allow(t.Context(), tc.limit, "203.0.113.1")
				if err != nil {
					t.Fatal(err)
				}
				if want := i < tc.limit.Burst; ok != want {
					t.Fatalf("request %d: allowed %v, want %v", i+1, ok, want)
				}
				if !ok && wait != c.end.Sub(now) {
					t.Errorf("wait %s, want the %s left of the window", wait, c.end.Sub(now))
				}
			}
			if got := c.end.Sub(c.start); got != tc.window || !c.start.Equal(now.Truncate(tc.window)) {
				t.Errorf("window [%s, %s), want %s long from %s", c.start, c.end, tc.window, now.Truncate(tc.window))
			}
		})
	}
}
