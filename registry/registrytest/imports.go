package registrytest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/siptest"
)

// ImportFullStore is a store that takes imports, as `sip import` uses it.
type ImportFullStore interface {
	FullStore
	evaluation.ImportStore
	// ImportedCount counts the records of a kind ("agent" or "result")
	// the import ledger holds for a source: what the tests check the
	// ledger by (no program needs it).
	ImportedCount(ctx context.Context, source, kind string) (int, error)
}

// RunImportStoreTests runs the import half of the conformance suite.
func RunImportStoreTests(t *testing.T, open func(t *testing.T) ImportFullStore) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, ImportFullStore)
	}{
		{"BatchWrittenOnce", testImportOnce},
		{"ConcurrentBatchesWriteOnce", testImportConcurrent},
		{"TakenNameFallsBack", testImportFallbackName},
		{"PointsCreditedOnce", testImportPoints},
		{"FailedBatchWritesNothing", testImportAtomic},
		{"ProvenanceFilters", testImportProvenance},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// importBatch is a batch of two agents (one with a SafeMolt key) and a
// result of each provenance for the first.
func importBatch(t *testing.T, s ImportFullStore, tag string) *evaluation.ImportBatch {
	t.Helper()
	mustSync(t, s, []registry.File{siptest.SIP(1, "alpha", "active"), siptest.SIP(2, "beta", "active")}, "c1", t0)
	refs, err := s.ImportVersions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var alpha evaluation.VersionRef
	for _, r := range refs {
		if r.EvaluationID == "alpha" && r.Current {
			alpha = r
		}
	}
	if alpha.VersionID == 0 {
		t.Fatalf("ImportVersions = %+v, want alpha's current version", refs)
	}
	key := "safemolt_" + tag + "0123456789abcdefghijkl"
	b := &evaluation.ImportBatch{Source: "test", At: t0}
	for i, name := range []string{"imp-" + tag, "imp2-" + tag} {
		a := registry.Agent{ID: fmt.Sprintf("agt_imp_%s_%d", tag, i), Name: name, ResultsPublic: true, CreatedAt: t0,
			KeyID: registry.LegacyKeyID(key), KeyHash: registry.HashSecret(key), ClaimTokenHash: registry.HashSecret("claim" + name),
			Owner: "owner-" + tag, ClaimedAt: t0}
		if i == 1 {
			a.KeyID, a.KeyHash = fmt.Sprintf("%012d", time.Now().UnixNano()%1e12), strings.Repeat("0", 64)
			a.Owner, a.ClaimedAt = "", time.Time{}
		}
		b.Agents = append(b.Agents, evaluation.ImportedAgent{SourceID: "src_" + name, Agent: a, FallbackName: name + "-fb"})
	}
	for i, p := range evaluation.Provenances[1:] {
		id := fmt.Sprintf("%s_%d", tag, i)
		at := t0.Add(time.Duration(i) * time.Minute)
		b.Results = append(b.Results, evaluation.ImportedResult{SourceID: "res_" + id,
			Registration: evaluation.Registration{ID: "reg_imp_" + id, AgentID: b.Agents[0].Agent.ID, EvaluationID: "alpha",
				VersionID: alpha.VersionID, Status: evaluation.RegCompleted, RegisteredAt: at, CompletedAt: at},
			Result: evaluation.Result{ID: "res_imp_" + id, RegistrationID: "reg_imp_" + id, AgentID: b.Agents[0].Agent.ID,
				EvaluationID: "alpha", VersionID: alpha.VersionID, Version: alpha.Version, Passed: true, Outcome: evaluation.OutcomePassed,
				CompletedAt: at, Provenance: p, Details: map[string]any{"source": "test"},
				Trace: evaluation.Trace{Status: "success", Gates: []evaluation.Gate{}, Inputs: map[string]string{}}},
			Points: 5})
	}
	return b
}

func testImportOnce(t *testing.T, s ImportFullStore) {
	b := importBatch(t, s, "once")
	n, err := s.ImportBatch(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	if n.Agents != 2 || n.Results != 3 || n.Skipped != 0 {
		t.Errorf("first write = %+v, want 2 agents, 3 results", n)
	}
	n, err = s.ImportBatch(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	if n.Agents != 0 || n.Results != 0 || n.Skipped != 5 {
		t.Errorf("second write = %+v, want everything skipped", n)
	}
	for kind, want := range map[string]int{"agent": 2, "result": 3} {
		if got, err := s.ImportedCount(t.Context(), "test", kind); err != nil || got != want {
			t.Errorf("ImportedCount(%s) = %d, %v; want %d", kind, got, err, want)
		}
	}
	// The SafeMolt key finds its agent by its derived id.
	a, err := s.AgentByKeyID(t.Context(), registry.KeyID("safemolt_once0123456789abcdefghijkl"))
	if err != nil || a.ID != b.Agents[0].Agent.ID || !a.Claimed() || a.Owner != "owner-once" {
		t.Errorf("AgentByKeyID = %+v, %v; want the imported, claimed agent", a, err)
	}
	r, err := s.Result(t.Context(), "res_imp_once_1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Of() != evaluation.ProvenanceBackfilled || r.Details["source"] != "test" {
		t.Errorf("Result = provenance %q details %v, want backfilled with its details", r.Of(), r.Details)
	}
}

func testImportConcurrent(t *testing.T, s ImportFullStore) {
	b := importBatch(t, s, "conc")
	var wg sync.WaitGroup
	counts := make([]evaluation.ImportCounts, 4)
	errs := make([]error, 4)
	for i := range counts {
		wg.Go(func() { counts[i], errs[i] = s.ImportBatch(t.Context(), b) })
	}
	wg.Wait()
	var total evaluation.ImportCounts
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		total.Add(counts[i])
	}
	if total.Agents != 2 || total.Results != 3 || total.Skipped != 15 {
		t.Errorf("four writes at once = %+v, want 2 agents and 3 results written once", total)
	}
}

func testImportFallbackName(t *testing.T, s ImportFullStore) {
	b := importBatch(t, s, "fb")
	mustAgent(t, s, strings.ToUpper(b.Agents[0].Agent.Name)) // taken, ignoring case
	n, err := s.ImportBatch(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	if n.Agents != 2 || n.Renamed != 1 {
		t.Errorf("counts = %+v, want 2 agents, 1 renamed", n)
	}
	a, err := s.AgentByID(t.Context(), b.Agents[0].Agent.ID)
	if err != nil || a.Name != b.Agents[0].FallbackName {
		t.Errorf("agent = %+v, %v; want its fallback name %q", a, err, b.Agents[0].FallbackName)
	}
	// Both names taken: refused, and nothing of the batch is written.
	c := importBatch(t, s, "fb2")
	c.Agents[0].FallbackName = b.Agents[0].FallbackName
	mustAgent(t, s, c.Agents[0].Agent.Name)
	if _, err := s.ImportBatch(t.Context(), c); err == nil {
		t.Fatal("a batch whose agent has no free name was written")
	}
	if got, _ := s.ImportedCount(t.Context(), "test", "agent"); got != 2 {
		t.Errorf("ledger holds %d agents after a refused batch, want 2", got)
	}
}

func testImportPoints(t *testing.T, s ImportFullStore) {
	b := importBatch(t, s, "pts")
	// Every result of the batch passes alpha; only the first evidenced one
	// would earn, and the importer asks points only of evidenced ones.
	for i := range b.Results {
		if !b.Results[i].Result.Of().Evidenced() {
			b.Results[i].Points = 0
		}
	}
	extra := b.Results[0]
	extra.SourceID, extra.Registration.ID, extra.Result.ID, extra.Result.RegistrationID = "res_pts_x", "reg_imp_pts_x", "res_imp_pts_x", "reg_imp_pts_x"
	b.Results = append(b.Results, extra)
	n, err := s.ImportBatch(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	if n.Credited != 1 {
		t.Errorf("credited %d results, want 1", n.Credited)
	}
	p, err := s.AgentPoints(t.Context(), b.Agents[0].Agent.ID)
	if err != nil || p != 5 {
		t.Errorf("AgentPoints = %v, %v; want 5 (credited once)", p, err)
	}
}

func testImportAtomic(t *testing.T, s ImportFullStore) {
	b := importBatch(t, s, "atom")
	b.Results[2].Registration.EvaluationID = "no-such-sip" // a foreign key refuses it
	b.Results[2].Result.EvaluationID = "no-such-sip"
	if _, err := s.ImportBatch(t.Context(), b); err == nil {
		t.Fatal("a batch with a result of an unknown SIP was written")
	}
	for _, kind := range []string{"agent", "result"} {
		if got, _ := s.ImportedCount(t.Context(), "test", kind); got != 0 {
			t.Errorf("ledger holds %d %ss after a failed batch, want 0", got, kind)
		}
	}
	if _, err := s.AgentByID(t.Context(), b.Agents[0].Agent.ID); err == nil {
		t.Error("an agent of a failed batch was written")
	}
}

func testImportProvenance(t *testing.T, s ImportFullStore) {
	b := importBatch(t, s, "prov")
	if _, err := s.ImportBatch(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	for _, p := range evaluation.Provenances {
		rs, _, err := s.Results(t.Context(), evaluation.ResultFilter{EvaluationID: "alpha", Provenance: p})
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if p == evaluation.ProvenanceGraded {
			want = 0
		}
		if len(rs) != want {
			t.Errorf("Results(provenance %s) = %d results, want %d", p, len(rs), want)
		}
		for _, r := range rs {
			if r.Of() != p {
				t.Errorf("Results(provenance %s) holds a result of %s", p, r.Of())
			}
		}
	}
	passes, err := s.Passes(t.Context(), b.Agents[0].Agent.ID, t0.Add(time.Hour))
	if err != nil || len(passes) != 1 {
		t.Fatalf("Passes = %d, %v; want the newest pass of alpha", len(passes), err)
	}
}
