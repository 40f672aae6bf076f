package api

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"
)

// limiter keeps a token bucket per client address for endpoints anyone
// may call without a key (registering agents, claiming them), so one
// client cannot squat names or make the server hammer X. Buckets live in
// memory, per replica; idle ones are dropped.
type limiter struct {
	mu      sync.Mutex
	every   rate.Limit
	burst   int
	clients map[string]*bucket
	now     func() time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(perMinute, burst int, now func() time.Time) *limiter {
	return &limiter{every: rate.Limit(float64(perMinute) / 60), burst: burst, clients: map[string]*bucket{}, now: now}
}

func (l *limiter) allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.clients) > 10000 {
		for k, b := range l.clients {
			if now.Sub(b.seen) > 10*time.Minute {
				delete(l.clients, k)
			}
		}
	}
	b := l.clients[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.clients[key] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// limited wraps a handler with the limiter.
func (l *limiter) limited(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if ok, wait := l.allow(c.RealIP()); !ok {
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			return &Error{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: "too many requests from this address",
				Hint: "Wait " + strconv.Itoa(int(wait.Seconds())+1) + " seconds and try again."}
		}
		return h(c)
	}
}
