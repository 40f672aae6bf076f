package api

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// discardWriter is a response writer that keeps nothing but its headers.
type discardWriter struct{ h http.Header }

func (w discardWriter) Header() http.Header         { return w.h }
func (w discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w discardWriter) WriteHeader(int)             {}

// TestAccessLogLine: one request gives one line with every field, on
// both handlers, with a secret route parameter redacted.
func TestAccessLogLine(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			h := slog.Handler(slog.NewJSONHandler(&buf, nil))
			if format == "text" {
				h = slog.NewTextHandler(&buf, nil)
			}
			s := &Server{log: slog.New(h), metrics: newMetrics()}
			e := echo.New()
			e.Use(s.middleware)
			e.GET("/claim/:token", func(c echo.Context) error { return c.String(http.StatusTeapot, "short and stout") })
			for range 2 { // the second on a pooled array
				buf.Reset()
				req := httptest.NewRequest(http.MethodGet, "/claim/s3cret-claim-token", nil)
				req.Header.Set(requestIDHeader, "req-12345678")
				e.ServeHTTP(httptest.NewRecorder(), req)
				line := buf.String()
				if strings.Count(line, "\n") != 1 || strings.Contains(line, "s3cret") {
					t.Fatalf("log = %q; want one line without the token", line)
				}
				if format == "text" {
					for _, want := range []string{"msg=request", "request_id=req-12345678", "method=GET", "route=/claim/:token",
						"path=/claim/[redacted]", "status=418", "bytes=15", "duration_us=", "remote=192.0.2.1"} {
						if !strings.Contains(line, want) {
							t.Errorf("log %q lacks %q", line, want)
						}
					}
					continue
				}
				var got map[string]any
				if err := json.Unmarshal([]byte(line), &got); err != nil {
					t.Fatal(err)
				}
				want := map[string]any{"msg": "request", "request_id": "req-12345678", "method": "GET", "route": "/claim/:token",
					"path": "/claim/[redacted]", "status": 418.0, "bytes": 15.0, "remote": "192.0.2.1"}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s = %v; want %v", k, got[k], v)
					}
				}
				if _, ok := got["duration_us"].(float64); !ok {
					t.Errorf("duration_us = %v; want a number", got["duration_us"])
				}
			}
		})
	}
}

// BenchmarkAccessLog serves one request through echo alone ("bare") and
// through the server's middleware ("logged": request id, headers, limits,
// metrics and the access log line, a JSON log to io.Discard): the
// difference is what the middleware costs.
func BenchmarkAccessLog(b *testing.B) {
	body := []byte(`{"success":true,"evaluations":[]}`)
	for _, name := range []string{"bare", "logged"} {
		b.Run(name, func(b *testing.B) {
			s := &Server{log: slog.New(slog.NewJSONHandler(io.Discard, nil)), metrics: newMetrics()}
			e := echo.New()
			if name == "logged" {
				e.Use(s.middleware)
			}
			e.GET("/api/v1/evaluations", func(c echo.Context) error { return c.JSONBlob(http.StatusOK, body) })
			req := httptest.NewRequest(http.MethodGet, "/api/v1/evaluations", nil)
			req.Header.Set(requestIDHeader, "bench-request-0001")
			w := discardWriter{http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				e.ServeHTTP(w, req)
			}
		})
	}
}

// TestNewRequestID: made ids are 24 hexadecimal digits, sane by the
// middleware's own rule, and do not repeat.
func TestNewRequestID(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := newRequestID()
		if len(id) != 24 || strings.Trim(id, "0123456789abcdef") != "" || !saneID(id) {
			t.Fatalf("id = %q; want 24 hexadecimal digits", id)
		}
		if seen[id] {
			t.Fatalf("id %q made twice", id)
		}
		seen[id] = true
	}
}
