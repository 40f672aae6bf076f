package api_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/postgres"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/registrytest"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/sqlite"
	"github.com/sipregistry/sip/registry/stats"
)

// BenchmarkStatsPages serves a statistics page, /stats and a search from
// each store holding 200 SIPs, 5,000 agents and 100,000 results spread
// over a year, under load (16 connections, 3 s each), and the floor: a
// bare echo handler returning the same page, precomputed. It also times
// the work the caches save: computing one evaluation's figures, and
// counting the registry's totals.
func BenchmarkStatsPages(b *testing.B) {
	const (
		workers, d = 16, 3 * time.Second
		sips       = 200
		agents     = 5000
		results    = 100_000
	)
	paths := []string{"/evaluations/SIP-7/stats", "/stats", "/search?q=agent", "/search?q=scout-4"}
	bodies := map[string][]byte{}
	for _, name := range []string{"sqlite", "postgres", "floor"} {
		var srvURL string
		var full registrytest.FullStore
		if name != "floor" {
			var bulk func(func(exec func(q string, args ...any)))
			var ts func(time.Time) any
			full, bulk, ts = statsStore(b, name)
			seedStatistics(b, full, bulk, ts, sips, agents, results)
			srv := httptest.NewServer(api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(full), Stats: stats.NewService(full, nil), Logger: slog.New(slog.DiscardHandler)}, runtimeStores{Agents: full, Evaluations: full, Jobs: full.(jobStore)})))
			defer srv.Close()
			srvURL = srv.URL
			b.Run(name+"/compute-evaluation", func(b *testing.B) {
				e, err := full.EntryByNumber(b.Context(), 7)
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					facts, err := full.Facts(b.Context(), e.ID)
					if err != nil {
						b.Fatal(err)
					}
					stats.Summarize(facts, time.Now(), stats.LeaveOutAsserted)
				}
			})
			b.Run(name+"/count-totals", func(b *testing.B) {
				for b.Loop() {
					if _, err := full.Totals(b.Context()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		for _, path := range paths {
			b.Run(name+path, func(b *testing.B) {
				url := srvURL + path
				if name == "floor" {
					e := echo.New()
					body := bodies[path]
					e.GET("/*", func(c echo.Context) error { return c.HTMLBlob(http.StatusOK, body) })
					srv := httptest.NewServer(e)
					defer srv.Close()
					url = srv.URL + path
				} else if bodies[path] == nil {
					resp, err := http.Get(url)
					if err != nil {
						b.Fatal(err)
					}
					bodies[path], _ = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				reportLoad(b, url, workers, d, "pages/s")
			})
		}
	}
}

// statsStore opens a store of the kind named, and a function that runs
// SQL on the same database (placeholders $1… on PostgreSQL, ?1… on SQLite)
// in one transaction, to seed it in bulk.
func statsStore(b *testing.B, kind string) (registrytest.FullStore, func(func(exec func(q string, args ...any))), func(time.Time) any) {
	ctx := b.Context()
	switch kind {
	case "sqlite":
		path := filepath.Join(b.TempDir(), "registry.db")
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		if err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		bulk := func(fn func(exec func(q string, args ...any))) {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			fn(func(q string, args ...any) {
				if _, err := tx.ExecContext(ctx, strings.ReplaceAll(q, "$", "?"), args...); err != nil {
					b.Fatal(err)
				}
			})
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		return s, bulk, func(t time.Time) any { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }
	default:
		url := postgrestest.URL(b)
		s, err := postgres.Open(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		if err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close(context.Background()) })
		bulk := func(fn func(exec func(q string, args ...any))) {
			tx, err := conn.Begin(ctx)
			if err != nil {
				b.Fatal(err)
			}
			fn(func(q string, args ...any) {
				if _, err := tx.Exec(ctx, q, args...); err != nil {
					b.Fatal(err)
				}
			})
			if err := tx.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
		return s, bulk, func(t time.Time) any { return t.UTC() }
	}
}

// insertRows inserts rows into table, 200 to a statement.
func insertRows(exec func(q string, args ...any), table string, rows [][]any) {
	for len(rows) > 0 {
		n := min(len(rows), 200)
		var q strings.Builder
		q.WriteString("INSERT INTO " + table + " VALUES ")
		var args []any
		for i, row := range rows[:n] {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(")
			for j, v := range row {
				if j > 0 {
					q.WriteString(", ")
				}
				args = append(args, v)
				fmt.Fprintf(&q, "$%d", len(args))
			}
			q.WriteString(")")
		}
		exec(q.String(), args...)
		rows = rows[n:]
	}
}

// seedStatistics syncs n SIPs, creates agents, and records results in
// bulk: each result with its own completed registration, outcomes and
// scores drawn at random, completed over the year before now.
func seedStatistics(b *testing.B, s registrytest.FullStore, bulk func(func(exec func(q string, args ...any))), ts func(time.Time) any, sips, agents, results int) {
	b.Helper()
	ctx := b.Context()
	now := time.Now()
	if _, err := registry.Sync(ctx, s, registry.Source{Files: siptest.Generate(sips, 11), Commit: "c1", Name: "bench"}, now.AddDate(-1, 0, 0)); err != nil {
		b.Fatal(err)
	}
	entries, err := s.Entries(ctx, registry.EntryFilter{EvaluationOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, agents)
	for i := range agents {
		a, _, err := registry.NewAgent(fmt.Sprintf("scout-%d", i), "A benchmark agent.", now)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.CreateAgent(ctx, a); err != nil {
			b.Fatal(err)
		}
		ids[i] = a.ID
	}
	outcomes := []evaluation.Outcome{evaluation.OutcomePassed, evaluation.OutcomePassed, evaluation.OutcomeFailed, evaluation.OutcomeExpired, evaluation.OutcomeCancelled}
	rng := rand.New(rand.NewPCG(1, 7))
	var regs, ress [][]any
	for i := range results {
		e := entries[i%len(entries)]
		agent := ids[rng.IntN(agents)]
		at := now.Add(-time.Duration(rng.Int64N(int64(365 * 24 * time.Hour))))
		o := outcomes[rng.IntN(len(outcomes))]
		status := evaluation.RegCompleted
		if o == evaluation.OutcomeCancelled {
			status = evaluation.RegCancelled
		}
		reg := fmt.Sprintf("reg_b%d", i)
		regs = append(regs, []any{reg, agent, e.ID, e.Current.ID, string(status), ts(at.Add(-time.Hour)), ts(at.Add(-time.Hour)), ts(at)})
		ress = append(ress, []any{fmt.Sprintf("res_b%d", i), reg, agent, e.ID, e.Current.ID, e.Version, e.ContentSHA256,
			o == evaluation.OutcomePassed, float64(rng.IntN(101)), 100.0, `{"status":"success"}`, ts(at), string(o)})
	}
	bulk(func(exec func(q string, args ...any)) {
		insertRows(exec, "registrations (id, agent_id, evaluation_id, version_id, status, registered_at, started_at, completed_at)", regs)
		insertRows(exec, "results (id, registration_id, agent_id, evaluation_id, version_id, version, content_sha256, passed, score, max_score, trace, completed_at, outcome)", ress)
	})
}
