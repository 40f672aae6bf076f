package api_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/registrytest"
	"github.com/sipregistry/sip/registry/siptest"
)

// BenchmarkPages serves / and /evaluations with 200 SIPs and 20 passes
// from each store under load (16 connections, 3 s each), and the floor: a
// bare echo handler that returns the same page, precomputed.
func BenchmarkPages(b *testing.B) {
	const workers, d = 16, 3 * time.Second
	files := siptest.Generate(200, 11)
	bodies := map[string][]byte{}
	for _, name := range []string{"sqlite", "floor", "postgres"} {
		for _, path := range []string{"/", "/evaluations"} {
			b.Run(name+path, func(b *testing.B) {
				var h http.Handler
				if name == "floor" {
					e := echo.New()
					e.GET(path, func(c echo.Context) error { return c.HTMLBlob(http.StatusOK, bodies[path]) })
					h = e
				} else {
					s := backends[name](b)
					if _, err := registry.Sync(b.Context(), s, registry.Source{Files: files, Commit: "c1", Name: "bench"}, time.Now()); err != nil {
						b.Fatal(err)
					}
					full := s.(registrytest.FullStore)
					seedPasses(b, full, 20)
					h = api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(s), Logger: slog.New(slog.DiscardHandler)}, runtimeStores{Agents: full, Evaluations: full, Jobs: s.(jobStore)}))
				}
				srv := httptest.NewServer(h)
				defer srv.Close()
				if name != "floor" && bodies[path] == nil {
					resp, err := http.Get(srv.URL + path)
					if err != nil {
						b.Fatal(err)
					}
					bodies[path], _ = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				reportLoad(b, srv.URL+path, workers, d, "pages/s")
			})
		}
	}
}

// seedPasses records n passes of the first active SIP by n agents.
func seedPasses(b *testing.B, s registrytest.FullStore, n int) {
	ctx := b.Context()
	entries, err := s.Entries(ctx, registry.EntryFilter{})
	if err != nil || len(entries) == 0 {
		b.Fatal(err)
	}
	e := entries[0]
	for i := range n {
		a, _, err := registry.NewAgent(fmt.Sprintf("bench-agent-%d", i), "", time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := s.CreateAgent(ctx, a); err != nil {
			b.Fatal(err)
		}
		reg, _, err := s.Register(ctx, &evaluation.Registration{ID: registry.NewID("reg"), AgentID: a.ID, EvaluationID: e.ID,
			VersionID: e.Current.ID, Version: e.Version, Status: evaluation.RegRegistered, RegisteredAt: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		r := &evaluation.Result{ID: registry.NewID("res"), RegistrationID: reg.ID, AgentID: a.ID, EvaluationID: e.ID, VersionID: e.Current.ID,
			Version: e.Version, ContentSHA256: e.ContentSHA256, Passed: true, CompletedAt: time.Now()}
		if _, err := s.RecordResult(ctx, r, e.Points); err != nil {
			b.Fatal(err)
		}
	}
}
