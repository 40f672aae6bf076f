package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

// nopResponse is a response writer that keeps its headers and drops the
// body, reset between requests as net/http's would be.
type nopResponse struct{ h http.Header }

func (w *nopResponse) Header() http.Header         { return w.h }
func (w *nopResponse) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopResponse) WriteHeader(int)             {}

// BenchmarkServeEvaluations is one GET /api/v1/evaluations (10 SIPs)
// handled in-process, without a network, on each store with a JSON access
// log to io.Discard as `sip serve` writes it, and by the floor, echo
// returning the same bytes: the difference is the API's own cost per
// request (the handler, the middleware, the store's generation check).
// Serial, so callgrind's instruction counts compare two builds.
func BenchmarkServeEvaluations(b *testing.B) {
	files := siptest.Generate(10, 1)
	var body []byte
	for _, name := range []string{"sqlite", "postgres", "floor"} {
		b.Run(name, func(b *testing.B) {
			var h http.Handler
			if name == "floor" {
				e := echo.New()
				e.GET("/api/v1/evaluations", func(c echo.Context) error { return c.JSONBlob(http.StatusOK, body) })
				h = e
			} else {
				s := backends[name](b)
				if _, err := registry.Sync(b.Context(), s, registry.Source{Files: files, Commit: "c1", Name: "bench"}, time.Now()); err != nil {
					b.Fatal(err)
				}
				h = api.NewServer(api.Config{Catalog: registry.NewCatalog(s), Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
			}
			req := httptest.NewRequest(http.MethodGet, "/api/v1/evaluations", nil)
			w := &nopResponse{h: http.Header{}}
			if body == nil && name != "floor" {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				body = rec.Body.Bytes()
			}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
}
