package api

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

const requestIDHeader = "X-Request-Id"

// maxBody caps API request bodies (api/openapi.yaml documents the limit).
const maxBody = 1 << 20

// requestID returns the request's id, set by withRequestID.
func requestID(c echo.Context) string {
	id, _ := c.Get("request_id").(string)
	return id
}

// withRequestID takes a sane X-Request-Id from the caller (so a trace
// spans services) or makes one, and echoes it on the response.
func withRequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(requestIDHeader)
		if !saneID(id) {
			b := make([]byte, 12)
			rand.Read(b)
			id = hex.EncodeToString(b)
		}
		c.Set("request_id", id)
		c.Response().Header().Set(requestIDHeader, id)
		return next(c)
	}
}

func saneID(id string) bool {
	if len(id) < 8 || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// withRecover turns a panic into a 500 through the error handler.
func withRecover(next echo.HandlerFunc) (h echo.HandlerFunc) {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return next(c)
	}
}

// withLimits refuses bodies over maxBody before a handler reads them.
func withLimits(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Path() == WebhookPath {
			return next(c) // GitHub's payloads go up to 25 MiB; the App caps them
		}
		r := c.Request()
		// No store keeps a NUL character (PostgreSQL refuses it in text):
		// one in the path or the query is bad input, not a server error.
		if strings.ContainsRune(r.URL.Path, 0) || strings.Contains(strings.ToLower(r.URL.RawQuery), "%00") {
			return badRequest("", "the request's path or query contains a NUL character", "Remove the %00.")
		}
		if r.ContentLength > maxBody {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge)
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, maxBody)
		return next(c)
	}
}

// withSecurityHeaders sets headers every response should carry.
func withSecurityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
		return next(c)
	}
}

// withLogAndMetrics writes one log line and the metrics of each request.
// It runs outside the error handler's response, so it sees final statuses.
func (s *Server) withLogAndMetrics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err) // write the error response now, so the status is final
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		status := c.Response().Status
		elapsed := time.Since(start)
		s.metrics.observe(c.Request().Method, route, status, elapsed)
		ctx := c.Request().Context()
		if !s.log.Enabled(ctx, slog.LevelInfo) {
			return nil
		}
		// A record holds five attributes without allocating; the last four
		// go in a group with no key, which handlers write inline, on an
		// array reused from a pool (handlers write the record before
		// LogAttrs returns).
		tail := accessTails.Get().(*[4]slog.Attr)
		tail[0] = slog.Int("status", status)
		tail[1] = slog.Int64("bytes", c.Response().Size)
		tail[2] = slog.Int64("duration_us", elapsed.Microseconds()) // an integer: slog encodes floats with encoding/json
		tail[3] = slog.String("remote", c.RealIP())
		s.log.LogAttrs(ctx, slog.LevelInfo, "request",
			slog.String("request_id", requestID(c)),
			slog.String("method", c.Request().Method),
			slog.String("route", route),
			slog.String("path", loggedPath(c)),
			slog.Attr{Value: slog.GroupValue(tail[:]...)},
		)
		*tail = [4]slog.Attr{}
		accessTails.Put(tail)
		return nil
	}
}

var accessTails = sync.Pool{New: func() any { return new([4]slog.Attr) }}

func itoa(n int) string { return strconv.Itoa(n) }

// secretParams are route parameters that are bearer secrets: whoever reads
// one can act with it (a claim token claims the agent).
var secretParams = map[string]bool{"token": true}

// loggedPath is the request's path with the values of secret route
// parameters replaced, so that reading the logs grants nothing.
func loggedPath(c echo.Context) string {
	p := c.Request().URL.Path
	for i, name := range c.ParamNames() {
		if secretParams[name] && i < len(c.ParamValues()) && c.ParamValues()[i] != "" {
			p = strings.Replace(p, c.ParamValues()[i], "[redacted]", 1)
		}
	}
	return p
}
