package safemolt_test

import (
	"context"
	_ "embed"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/registrytest"
	"github.com/sipregistry/sip/registry/safemolt"
	"github.com/sipregistry/sip/registry/sqlite"
)

//go:embed testdata/safemolt.sql
var fixture string

var now = time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)

// source makes a SafeMolt database of the fixture in a fresh schema.
func source(t *testing.T) *safemolt.Source {
	t.Helper()
	url := postgrestest.URL(t)
	conn, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Exec(t.Context(), fixture); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	src, err := safemolt.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return src
}

type target interface {
	registrytest.ImportFullStore
	evaluation.JobStore
	evaluation.JudgingStore
	evaluation.SessionStore
	evaluation.MessageStore
	evaluation.ProctorStore
	evaluation.SeatStore
}

// targets are the two stores, each with sip's bundled SIPs.
func targets(t *testing.T) map[string]func(t *testing.T) (target, func() string) {
	return map[string]func(t *testing.T) (target, func() string){
		"sqlite": func(t *testing.T) (target, func() string) {
			path := filepath.Join(t.TempDir(), "registry.db")
			s, err := sqlite.Open(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			if err := s.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			syncBundled(t, s)
			return s, func() string {
				b, _ := os.ReadFile(path)
				w, _ := os.ReadFile(path + "-wal")
				return string(b) + string(w)
			}
		},
		"postgres": func(t *testing.T) (target, func() string) {
			url := postgrestest.URL(t)
			s := postgrestest.OpenURL(t, url)
			syncBundled(t, s)
			return s, func() string {
				conn, err := pgxpool.New(context.Background(), url)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				var dump string
				if err := conn.QueryRow(context.Background(), `SELECT
					(SELECT string_agg(a::text, '|') FROM agents a) || (SELECT string_agg(r::text, '|') FROM results r) ||
					(SELECT string_agg(l::text, '|') FROM import_ledger l)`).Scan(&dump); err != nil {
					t.Fatal(err)
				}
				return dump
			}
		},
	}
}

func syncBundled(t testing.TB, s registry.Store) {
	t.Helper()
	files, err := registry.ReadFS(evaluations.FS, ".", "evaluations")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Sync(t.Context(), s, registry.Source{Files: files, Commit: "c1", Name: "bundled"}, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, src safemolt.Reader, dst evaluation.ImportStore, size int) (*safemolt.Report, error) {
	im := &safemolt.Importer{Source: src, Target: dst, BatchSize: size, Now: func() time.Time { return now }}
	return im.Run(t.Context(), false)
}

// state is what an import left, to compare runs.
func state(t *testing.T, s target) []string {
	t.Helper()
	var out []string
	for _, id := range []string{"poaw", "identity-check", "x-verification"} {
		rs, _, err := s.Results(t.Context(), evaluation.ResultFilter{EvaluationID: id, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			out = append(out, r.ID+" "+r.AgentID+" "+string(r.Of())+" "+string(r.EndedAs())+" "+r.Version)
		}
	}
	for _, kind := range []string{"agent", "result", "session", "message", "transcript"} {
		n, err := s.ImportedCount(t.Context(), safemolt.SourceName, kind)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, kind+" "+string(rune('0'+n)))
	}
	sort.Strings(out)
	return out
}

func agentOf(t *testing.T, s target, name string) *registry.Agent {
	t.Helper()
	a, err := s.AgentByName(t.Context(), name)
	if err != nil {
		t.Fatalf("agent %q: %v", name, err)
	}
	return a
}

func TestImportFixture(t *testing.T) {
	t.Parallel()
	for name, open := range targets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := source(t)
			dst, raw := open(t)
			rep, err := run(t, src, dst, 3)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Agents != 8 || rep.Written.Agents != 8 {
				t.Errorf("agents read %d, written %d; want 8 and 8", rep.Agents, rep.Written.Agents)
			}
			// 12 results: orphaned, missing registration's (kept), unknown
			// evaluation, future; plus 4 vetting passes is_vetted asserts
			// (bob has its own; pub: poaw and identity; dash: poaw).
			wantSkipped := map[string]int{"orphaned_result": 1, "future_result": 1, "unknown_evaluation": 1}
			for kind, n := range wantSkipped {
				if rep.ProblemCounts[kind] != n {
					t.Errorf("problems %s = %d, want %d (%v)", kind, rep.ProblemCounts[kind], n, rep.Problems)
				}
			}
			for _, kind := range []string{"renamed", "no_key", "unknown_version", "orphaned_registration"} {
				if rep.ProblemCounts[kind] == 0 {
					t.Errorf("no %s problem reported: %v", kind, rep.ProblemCounts)
				}
			}
			if rep.Written.Results != 12+3 {
				t.Errorf("results written = %d, want 15 (12 of evaluation_results, 3 asserted by is_vetted): %+v", rep.Written.Results, rep.ByProvenance)
			}

			ada := agentOf(t, dst, "Ada")
			if ada.Owner != "ada_on_x" || !ada.Claimed() || ada.IdentityMD == "" {
				t.Errorf("Ada = %+v, want claimed by ada_on_x with its identity", ada)
			}
			// The other 'ada' takes its fallback name.
			if _, err := dst.AgentByName(t.Context(), "ada-"); err == nil {
				t.Error("unexpected agent")
			}
			other, err := dst.AgentByKeyID(t.Context(), registry.KeyID("safemolt_ada2key123456789abcdefghij"))
			if err != nil || !strings.HasPrefix(other.Name, "ada-") || other.Owner == "" {
				t.Errorf("the other ada = %+v, %v; want a fallback name and its dashboard owner", other, err)
			}
			sp, err := dst.AgentByKeyID(t.Context(), registry.KeyID("safemolt_spkey00123456789abcdefghij"))
			if err != nil || registry.CheckAgentName(sp.Name) != nil {
				t.Errorf("the agent with a long name = %+v, %v; want a valid sip name", sp, err)
			}
			// Keys: every SafeMolt key authenticates, none is stored.
			for _, key := range []string{"safemolt_adakey0123456789abcdefghij", "safemolt_bobkey0123456789abcdefghij", "safemolt_pubkey0123456789abcdefghi"} {
				a, err := dst.AgentByKeyID(t.Context(), registry.KeyID(key))
				if err != nil || !registry.KeyMatches(key, a.KeyHash) {
					t.Errorf("key %s…: %v, want it to authenticate", key[:14], err)
				}
				if strings.Contains(raw(), key) {
					t.Errorf("the plain key %s… is in the store", key[:14])
				}
			}
			if strings.Contains(raw(), "safemolt_claim_ada") {
				t.Error("a plain claim token is in the store")
			}

			// Provenance per result.
			byAgent := func(name, eval string) []*evaluation.Result {
				a := agentOf(t, dst, name)
				rs, _, err := dst.Results(t.Context(), evaluation.ResultFilter{AgentID: a.ID, EvaluationID: eval, Viewer: a.ID})
				if err != nil {
					t.Fatal(err)
				}
				return rs
			}
			for _, tc := range []struct {
				agent, eval string
				want        []evaluation.Provenance
			}{
				{"Ada", "poaw", []evaluation.Provenance{"imported"}},
				{"Ada", "identity-check", []evaluation.Provenance{"imported", "imported"}}, // one whose registration is missing
				{"Ada", "x-verification", []evaluation.Provenance{"backfilled"}},
				{"bob", "poaw", []evaluation.Provenance{"backfilled"}},
				{"public-ai-7", "poaw", []evaluation.Provenance{"provisioned"}},
				{"public-ai-7", "identity-check", []evaluation.Provenance{"provisioned"}},
				{"dashed", "poaw", []evaluation.Provenance{"backfilled"}},
			} {
				t.Run(tc.agent+"/"+tc.eval, func(t *testing.T) {
					var got []evaluation.Provenance
					for _, r := range byAgent(tc.agent, tc.eval) {
						got = append(got, r.Of())
					}
					if !slices.Equal(got, tc.want) {
						t.Errorf("got provenance %v, want %v", got, tc.want)
					}
				})
			}
			// A version sip does not hold is kept and labelled.
			poaw := byAgent("Ada", "poaw")[0]
			if poaw.Version != "1.1.0" || poaw.Details["version_held"] != false || poaw.Details["source_version"] != "1.1.0" {
				t.Errorf("Ada's poaw = version %q details %v, want 1.1.0 labelled as not held", poaw.Version, poaw.Details)
			}
			// Points come from sip's SIPs, for evidenced passes only.
			pts, err := dst.AgentPoints(t.Context(), ada.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := 10.0 + 1.0 + 5 + 50; pts != want {
				t.Errorf("Ada's points = %v, want %v (sip's poaw, identity-check, non-spamminess and the certification; the backfilled x-verification earns none)", pts, want)
			}
			bob := agentOf(t, dst, "bob")
			if pts, _ := dst.AgentPoints(t.Context(), bob.ID); pts != 0 {
				t.Errorf("bob's points = %v, want 0: every pass of its is backfilled", pts)
			}

			// Twice: nothing written again.
			before := state(t, dst)
			again, err := run(t, src, dst, 3)
			if err != nil {
				t.Fatal(err)
			}
			if again.Written.Agents != 0 || again.Written.Results != 0 {
				t.Errorf("second import wrote %+v, want nothing", again.Written)
			}
			if after := state(t, dst); !slices.Equal(before, after) {
				t.Errorf("second import changed the store:\n%v\n%v", before, after)
			}
		})
	}
}

// failing is a store that fails its nth batch, as a run interrupted
// there.
type failing struct {
	evaluation.ImportStore
	mu    sync.Mutex
	n, at int
}

var errInterrupted = errors.New("interrupted")

func (f *failing) ImportBatch(ctx context.Context, b *evaluation.ImportBatch) (evaluation.ImportCounts, error) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	if n == f.at {
		return evaluation.ImportCounts{}, errInterrupted
	}
	return f.ImportStore.ImportBatch(ctx, b)
}

func TestImportInterruptedAndResumed(t *testing.T) {
	t.Parallel()
	for name, open := range targets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := source(t)
			clean, _ := open(t)
			if _, err := run(t, src, clean, 2); err != nil {
				t.Fatal(err)
			}
			want := state(t, clean)
			// Interrupted at every batch in turn, then run to the end.
			for at := 1; ; at++ {
				dst, _ := open(t)
				if _, err := run(t, src, &failing{ImportStore: dst, at: at}, 2); err == nil {
					if at < 6 {
						t.Fatalf("the import took %d batches, want several", at-1)
					}
					break // every batch was interrupted once
				} else if !errors.Is(err, errInterrupted) {
					t.Fatalf("interrupted at batch %d: err = %v", at, err)
				}
				if _, err := run(t, src, dst, 2); err != nil {
					t.Fatalf("resumed after batch %d: %v", at, err)
				}
				if got := state(t, dst); !slices.Equal(got, want) {
					t.Errorf("interrupted at batch %d and resumed:\n got %v\nwant %v", at, got, want)
				}
			}
		})
	}
}

func TestImportTwoAtOnce(t *testing.T) {
	t.Parallel()
	for name, open := range targets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := source(t)
			clean, _ := open(t)
			if _, err := run(t, src, clean, 2); err != nil {
				t.Fatal(err)
			}
			want := state(t, clean)
			dst, _ := open(t)
			var wg sync.WaitGroup
			reps := make([]*safemolt.Report, 2)
			errs := make([]error, 2)
			for i := range reps {
				wg.Go(func() { reps[i], errs[i] = run(t, src, dst, 2) })
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if got := reps[0].Written.Agents + reps[1].Written.Agents; got != 8 {
				t.Errorf("two imports at once wrote %d agents, want 8", got)
			}
			if got := state(t, dst); !slices.Equal(got, want) {
				t.Errorf("two imports at once:\n got %v\nwant %v", got, want)
			}
		})
	}
}

func TestPlanWritesNothing(t *testing.T) {
	t.Parallel()
	src := source(t)
	dst, _ := targets(t)["sqlite"](t)
	rep, err := (&safemolt.Importer{Source: src, Target: dst, Now: func() time.Time { return now }}).Run(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Agents != 8 || rep.Mapped == 0 || rep.Written != (evaluation.ImportCounts{}) {
		t.Errorf("plan = %+v, want 8 agents read and nothing written", rep)
	}
	if rep.Tables["evaluation_messages"] != 11 || rep.Tables["certification_jobs"] != 5 {
		t.Errorf("plan counts tables %v, want the messages and jobs too", rep.Tables)
	}
	if n, _ := dst.ImportedCount(t.Context(), safemolt.SourceName, "agent"); n != 0 {
		t.Errorf("a plan wrote %d agents", n)
	}
}
