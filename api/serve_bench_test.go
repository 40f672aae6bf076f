package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

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
			h := listHandler(b, name, files, &body, slog.NewJSONHandler(io.Discard, nil))
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
