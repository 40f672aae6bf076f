package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sipregistry/sip/registry/ratelimit"
)

// Limit is one rate limit: at most Burst requests of one key (a client
// address, an agent, a session) at once, PerMinute on average. Limits of
// different names never share a count.
type Limit ratelimit.Limit

// Limiter keeps the counts of rate limits (ratelimit.Limiter): the
// server takes one (Config.Limiter); without one it counts in the
// process.
type Limiter = ratelimit.Limiter

// limited wraps a handler with limit l, per client address.
func (s *Server) limited(l Limit, h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ok, wait, err := s.limiter.Allow(c.Request().Context(), ratelimit.Limit(l), c.RealIP())
		if err != nil {
			return err
		}
		if !ok {
			c.Response().Header().Set("Retry-After", retryAfter(wait))
			return &Error{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: "too many requests from this address",
				Hint: "Wait " + retryAfter(wait) + " seconds and try again."}
		}
		return h(c)
	}
}

// retryAfter is a wait in whole seconds, rounded up past it.
func retryAfter(wait time.Duration) string { return strconv.Itoa(int(wait.Seconds()) + 1) }
