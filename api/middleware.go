package api

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/rand/v2"
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

// requestID returns the request's id, set by the middleware (it is the
// response's X-Request-Id header).
func requestID(c echo.Context) string {
	if v := c.Response().Header()[requestIDHeader]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Headers every response carries. Assigned to the header map as they are
// (the keys are canonical); their capacity equals their length, so an Add
// copies instead of writing into the shared array.
var (
	nosniff        = []string{"nosniff"}[:1:1]
	referrerPolicy = []string{"strict-origin-when-cross-origin"}[:1:1]
)

// middleware is every request's handling around its route's handler, in
// one function (echo builds the chain of middlewares anew for every
// request): from the outside in, the request id, the log line and metrics
// (outside the error handler's response, so they see final statuses),
// recovery from a panic, the security headers and the request limits.
func (s *Server) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		h := c.Response().Header()
		// A sane X-Request-Id from the caller is kept (so a trace spans
		// services); else one is made. Either is echoed on the response.
		id := header(c.Request().Header, requestIDHeader)
		if !saneID(id) {
			id = newRequestID()
		}
		h[requestIDHeader] = []string{id}
		err := s.guarded(c, next)
		if err != nil {
			c.Error(err) // write the error response now, so the status is final
		}
		s.logRequest(c, id, start, time.Now())
		return nil
	}
}

// guarded runs next with the security headers and the request limits,
// turning a panic into an error (answered 500 by the error handler).
func (s *Server) guarded(c echo.Context, next echo.HandlerFunc) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	h := c.Response().Header()
	h["X-Content-Type-Options"] = nosniff
	h["Referrer-Policy"] = referrerPolicy
	if err := limitRequest(c); err != nil {
		return err
	}
	return next(c)
}

// newRequestID is 24 random hexadecimal digits. The id ties a response
// to its log lines and grants nothing, so the runtime's generator (ChaCha8,
// seeded from the system's randomness) serves: a system call per request
// to crypto/rand's did not buy anything.
func newRequestID() string {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	return hex.EncodeToString(b[:])
}

// header is h's first value of key, which must be canonical (as net/http
// makes the names of a request's headers): Header.Get canonicalises the
// key again on every call.
func header(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
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

// limitRequest refuses bodies over maxBody before a handler reads them.
func limitRequest(c echo.Context) error {
	if c.Path() == WebhookPath {
		return nil // GitHub's payloads go up to 25 MiB; the App caps them
	}
	r := c.Request()
	// No store keeps a NUL character (PostgreSQL refuses it in text):
	// one in the path or the query is bad input, not a server error.
	// ("%00" has no letters: no case to fold.)
	if strings.IndexByte(r.URL.Path, 0) >= 0 || strings.Contains(r.URL.RawQuery, "%00") {
		return badRequest("", "the request's path or query contains a NUL character", "Remove the %00.")
	}
	if r.ContentLength > maxBody {
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge)
	}
	if r.Body != http.NoBody && r.Body != nil { // NoBody: a request without one, nothing to cap
		r.Body = http.MaxBytesReader(c.Response(), r.Body, maxBody)
	}
	return nil
}

// logRequest records the metrics of a request that ran from start to end
// and writes its log line.
func (s *Server) logRequest(c echo.Context, id string, start, end time.Time) {
	route := c.Path()
	if route == "" {
		route = "unmatched"
	}
	status := c.Response().Status
	elapsed := end.Sub(start)
	s.metrics.observe(c.Request().Method, route, status, elapsed)
	ctx := c.Request().Context()
	h := s.log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	// The record goes to the handler directly: slog.Logger would read
	// the clock again and walk the stack for a source location the line
	// does not show. A record holds five attributes without allocating;
	// the last four go in a group with no key, which handlers write
	// inline, on an array reused from a pool (handlers write the record
	// before Handle returns).
	tail := accessTails.Get().(*[4]slog.Attr)
	tail[0] = slog.Int("status", status)
	tail[1] = slog.Int64("bytes", c.Response().Size)
	tail[2] = slog.Int64("duration_us", elapsed.Microseconds()) // an integer: slog encodes floats with encoding/json
	tail[3] = slog.String("remote", c.RealIP())
	r := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	r.AddAttrs(
		slog.String("request_id", id),
		slog.String("method", c.Request().Method),
		slog.String("route", route),
		slog.String("path", loggedPath(c)),
		slog.Attr{Value: slog.GroupValue(tail[:]...)},
	)
	h.Handle(ctx, r)
	*tail = [4]slog.Attr{}
	accessTails.Put(tail)
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
