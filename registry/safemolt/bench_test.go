package safemolt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/safemolt"
	"github.com/sipregistry/sip/registry/sqlite"
)

// benchSource makes a SafeMolt database of agents agents with perAgent
// results each (half PoAW, half identity checks, a third failed), with
// SafeMolt's indexes, in a fresh schema.
func benchSource(b *testing.B, agents, perAgent int) *safemolt.Source {
	b.Helper()
	url := postgrestest.URL(b)
	pool, err := pgxpool.New(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	results := agents * perAgent
	for _, q := range []string{
		fixture,
		// The fixture's rows stay; these are the bulk.
		`CREATE INDEX idx_eval_results_agent ON evaluation_results(agent_id)`,
		`CREATE INDEX idx_cert_jobs_registration ON certification_jobs(registration_id)`,
		fmt.Sprintf(`INSERT INTO agents (id, name, description, api_key, is_claimed, created_at, owner, is_vetted, identity_md)
			SELECT 'bench_' || lpad(i::text, 7, '0'), 'bench-' || i, 'A generated agent.', 'safemolt_bench' || lpad(i::text, 12, '0') || 'abcdefgh',
				i %% 2 = 0, '2025-01-01'::timestamptz + i * interval '1 second', CASE WHEN i %% 2 = 0 THEN 'x_' || i END, true, '# Bench ' || i
			FROM generate_series(1, %d) i`, agents),
		fmt.Sprintf(`INSERT INTO evaluation_registrations (id, agent_id, evaluation_id, registered_at, status, started_at, completed_at)
			SELECT 'breg_' || lpad(i::text, 9, '0'), 'bench_' || lpad((i %% %d + 1)::text, 7, '0'), CASE WHEN i %% 2 = 0 THEN 'poaw' ELSE 'identity-check' END,
				'2025-02-01'::timestamptz + i * interval '1 second', 'completed', '2025-02-01'::timestamptz + i * interval '1 second',
				'2025-02-01'::timestamptz + i * interval '1 second' + interval '5 seconds'
			FROM generate_series(1, %d) i`, agents, results),
		fmt.Sprintf(`INSERT INTO evaluation_results (id, registration_id, agent_id, evaluation_id, passed, result_data, completed_at, points_earned, evaluation_version)
			SELECT 'bres_' || lpad(i::text, 9, '0'), 'breg_' || lpad(i::text, 9, '0'), 'bench_' || lpad((i %% %d + 1)::text, 7, '0'),
				CASE WHEN i %% 2 = 0 THEN 'poaw' ELSE 'identity-check' END, i %% 3 <> 0, ('{"challenge_id": "vc_' || i || '"}')::jsonb,
				'2025-02-01'::timestamptz + i * interval '1 second' + interval '5 seconds', 0.5, '1.0.0'
			FROM generate_series(1, %d) i`, agents, results),
		`ANALYZE`,
	} {
		if _, err := pool.Exec(b.Context(), q); err != nil {
			b.Fatalf("bench source: %v", err)
		}
	}
	src, err := safemolt.Open(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(src.Close)
	return src
}

// BenchmarkImport imports a generated SafeMolt database (10,000 agents,
// or SIP_BENCH_IMPORT_AGENTS; ten results each) into each store and reports rows a second and
// the largest heap seen between batches: the import streams, so the heap
// stays flat whatever the size of the source.
func BenchmarkImport(b *testing.B) {
	const perAgent = 10
	agents := 10_000
	if testing.Short() {
		agents = 1_000
	}
	if v := os.Getenv("SIP_BENCH_IMPORT_AGENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("SIP_BENCH_IMPORT_AGENTS=%q is not a number of agents", v)
		}
		agents = n
	}
	for _, store := range []string{"plan", "sqlite", "postgres"} {
		b.Run(fmt.Sprintf("%s/agents=%d/results=%d", store, agents, agents*perAgent), func(b *testing.B) {
			src := benchSource(b, agents, perAgent)
			for b.Loop() {
				b.StopTimer()
				var dst evaluation.ImportStore
				switch store {
				case "plan": // reading and mapping only
					s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "registry.db"))
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Migrate(b.Context()); err != nil {
						b.Fatal(err)
					}
					syncBundled(b, s)
					b.Cleanup(func() { s.Close() })
					dst = s
				case "sqlite":
					s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "registry.db"))
					if err != nil {
						b.Fatal(err)
					}
					if err := s.Migrate(b.Context()); err != nil {
						b.Fatal(err)
					}
					syncBundled(b, s)
					b.Cleanup(func() { s.Close() })
					dst = s
				default:
					s := postgrestest.Open(b)
					syncBundled(b, s)
					dst = s
				}
				runtime.GC()
				var peak atomic.Uint64
				im := &safemolt.Importer{Source: src, Target: dst, BatchSize: 1000, Now: func() time.Time { return now },
					Progress: func(safemolt.Progress) {
						var m runtime.MemStats
						runtime.ReadMemStats(&m)
						if m.HeapInuse > peak.Load() {
							peak.Store(m.HeapInuse)
						}
					}}
				b.StartTimer()
				cpu0 := cpuTime()
				start := time.Now()
				rep, err := im.Run(context.Background(), store == "plan")
				if err != nil {
					b.Fatal(err)
				}
				elapsed := time.Since(start)
				b.ReportMetric((cpuTime() - cpu0).Seconds(), "cpu-s")
				rows := float64(rep.Written.Agents + rep.Written.Results)
				if store == "plan" {
					rows = float64(rep.Agents + rep.Results)
				} else if rep.Written.Agents < agents || rep.Written.Results < agents*perAgent {
					b.Fatalf("wrote %+v, want %d agents and %d results", rep.Written, agents, agents*perAgent)
				}
				b.ReportMetric(rows/elapsed.Seconds(), "rows/s")
				b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
			}
		})
	}
}

// cpuTime is the CPU time this process has used (user and system): on a
// machine shared with other work, wall time says more about the others.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
