package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// discardWriter is a response writer that keeps nothing but its headers.
type discardWriter struct{ h http.Header }

func (w discardWriter) Header() http.Header         { return w.h }
func (w discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w discardWriter) WriteHeader(int)             {}

// BenchmarkAccessLog serves one request through the request id alone
// ("bare") and with the access log line and metrics ("logged", a JSON
// log to io.Discard): the difference is what logging a request costs.
func BenchmarkAccessLog(b *testing.B) {
	body := []byte(`{"success":true,"evaluations":[]}`)
	for _, name := range []string{"bare", "logged"} {
		b.Run(name, func(b *testing.B) {
			s := &Server{log: slog.New(slog.NewJSONHandler(io.Discard, nil)), metrics: newMetrics()}
			e := echo.New()
			if name == "bare" {
				e.Use(withRequestID)
			} else {
				e.Use(withRequestID, s.withLogAndMetrics)
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
