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
	"github.com/sipregistry/sip/registry/safemolt/safemolttest"
	"github.com/sipregistry/sip/registry/sqlite"
)

// benchSource makes a SafeMolt database of the fixture and agents
// generated agents with perAgent results each (safemolttest.Generate), in
// a fresh schema.
func benchSource(b *testing.B, agents, perAgent int) *safemolt.Source {
	b.Helper()
	url := postgrestest.URL(b)
	pool, err := pgxpool.New(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(b.Context(), fixture); err != nil {
		b.Fatalf("bench source: %v", err)
	}
	start := time.Now()
	if err := safemolttest.Generate(b.Context(), pool, safemolttest.Size{Agents: agents, ResultsPerAgent: perAgent}); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d agents and %d results in %v", agents, agents*perAgent, time.Since(start).Round(time.Second))
	src, err := safemolt.Open(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(src.Close)
	return src
}

// BenchmarkImport imports a generated SafeMolt database (10,000 agents,
// or SIP_BENCH_IMPORT_AGENTS; ten results each, a session with four
// messages for one result in a hundred, a certification transcript for
// another) into each store and reports rows a second, the largest heap
// seen between batches and the process's peak RSS: the import streams, so
// memory stays flat whatever the size of the source. `make bench-import`
// runs each store in its own process at full size (100,000 agents and
// 1,000,000 results), so each peak RSS is its own.
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
				im := &safemolt.Importer{Source: src, Target: dst, BatchSize: benchBatch(), Now: func() time.Time { return now },
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
				b.Logf("%s: %v, written %+v, problems %v", store, elapsed.Round(time.Second), rep.Written, rep.ProblemCounts)
				b.ReportMetric((cpuTime() - cpu0).Seconds(), "cpu-s")
				rows := float64(rep.Written.Agents + rep.Written.Results + rep.Written.Sessions + rep.Written.Messages + rep.Written.Transcripts)
				if store == "plan" {
					rows = float64(rep.Agents + rep.Results)
				} else if rep.Written.Agents < agents || rep.Written.Results < agents*perAgent {
					b.Fatalf("wrote %+v, want %d agents and %d results", rep.Written, agents, agents*perAgent)
				}
				b.ReportMetric(rows/elapsed.Seconds(), "rows/s")
				b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
				b.ReportMetric(elapsed.Seconds(), "wall-s")
				b.ReportMetric(float64(maxRSS())/(1<<20), "peak-RSS-MiB")
			}
		})
	}
}

// maxRSS is the largest resident set this process has had, in bytes.
func maxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss << 10 // kilobytes on Linux
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

// benchBatch is the batch size of the benchmark: SIP_BENCH_IMPORT_BATCH,
// or sip import's default, 5,000 source rows.
func benchBatch() int {
	if n, err := strconv.Atoi(os.Getenv("SIP_BENCH_IMPORT_BATCH")); err == nil && n > 0 {
		return n
	}
	return 5000
}
