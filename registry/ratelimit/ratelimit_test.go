package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry/ratelimit"
)

// windowCounter is a Counter that remembers the windows it was asked
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

// TestSharedWindows: a limit becomes windows of Burst requests,
// Burst/PerMinute minutes long, aligned so every replica agrees, and the
// wait is what is left of the window.
func TestSharedWindows(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 31, 500_000_000, time.UTC)
	for _, tc := range []struct {
		limit  ratelimit.Limit
		window time.Duration
	}{
		{ratelimit.Limit{Name: "registrations", PerMinute: 20, Burst: 20}, time.Minute},
		{ratelimit.Limit{Name: "agent-posts", PerMinute: 600, Burst: 60}, 6 * time.Second},
		{ratelimit.Limit{Name: "session-posts", PerMinute: 3000, Burst: 600}, 12 * time.Second},
		{ratelimit.Limit{Name: "fast", PerMinute: 6000, Burst: 1}, time.Second}, // never under a second
		{ratelimit.Limit{Name: "unset", PerMinute: 0, Burst: 5}, time.Minute},
	} {
		t.Run(tc.limit.Name, func(t *testing.T) {
			c := &windowCounter{n: map[string]int64{}}
			l := ratelimit.NewShared(c, func() time.Time { return now })
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
