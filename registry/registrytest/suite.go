// Package registrytest holds the conformance suite that every
// registry.Store implementation must pass, so the embedded SQLite store and
// the PostgreSQL store cannot drift apart.
package registrytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

// Opener returns a new, migrated, empty store; the test owns it.
type Opener func(t *testing.T) registry.Store

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// RunStoreTests runs the conformance suite against the stores open makes.
func RunStoreTests(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, registry.Store)
	}{
		{"Empty", testEmpty},
		{"FirstSync", testFirstSync},
		{"ResyncChangesNothing", testResync},
		{"ChangeRecordsVersion", testChange},
		{"InvalidSetIsNotApplied", testInvalidNotApplied},
		{"RemovedFileIsDeprecated", testRemoved},
		{"Filters", testFilters},
		{"StalePlanConflicts", testStalePlan},
		{"ConstraintsInSQL", testConstraints},
		{"FailedApplyWritesNothing", testAtomic},
		{"ConcurrentSyncs", testConcurrentSyncs},
		{"Certification", testCertificationRoundTrip},
		{"SecretsMadeOnce", testSecrets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

func baseSet() []registry.File {
	return []registry.File{
		siptest.SIP(1, "alpha", "active"),
		siptest.SIP(2, "beta", "active", "alpha"),
		siptest.SIP(3, "gamma", "draft", "alpha", "beta"),
	}
}

func mustSync(t *testing.T, s registry.Store, files []registry.File, commit string, at time.Time) *registry.SyncReport {
	t.Helper()
	r, err := registry.Sync(t.Context(), s, registry.Source{Files: files, Commit: commit, Name: "test"}, at)
	if err != nil {
		t.Fatalf("sync %s: %v (problems %v)", commit, err, r)
	}
	return r
}

func ids(es []*registry.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func testEmpty(t *testing.T, s registry.Store) {
	ctx := t.Context()
	if st, err := s.SyncState(ctx); err != nil || st.Generation != 0 {
		t.Errorf("SyncState = %+v, %v", st, err)
	}
	if es, err := s.Entries(ctx, registry.EntryFilter{}); err != nil || len(es) != 0 || es == nil {
		t.Errorf("Entries = %v, %v; want an empty list", es, err)
	}
	if _, err := s.Entry(ctx, "nope"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Entry: %v, want ErrNotFound", err)
	}
	if _, err := s.EntryByNumber(ctx, 9); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("EntryByNumber: %v, want ErrNotFound", err)
	}
	if _, err := s.Versions(ctx, "nope"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Versions: %v, want ErrNotFound", err)
	}
	if _, err := s.Content(ctx, "nope"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Content: %v, want ErrNotFound", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func testFirstSync(t *testing.T, s registry.Store) {
	ctx := t.Context()
	r := mustSync(t, s, baseSet(), "c1", t0)
	if !r.Applied || !slices.Equal(r.Added, []string{"alpha", "beta", "gamma"}) || len(r.Changed)+len(r.Deprecated)+len(r.Unchanged) != 0 {
		t.Fatalf("report %+v", r)
	}
	es, err := s.Entries(ctx, registry.EntryFilter{})
	if err != nil || !slices.Equal(ids(es), []string{"alpha", "beta", "gamma"}) {
		t.Fatalf("Entries = %v, %v", ids(es), err)
	}
	e, err := s.Entry(ctx, "gamma")
	if err != nil {
		t.Fatal(err)
	}
	want := registry.Parse("evaluations/SIP-3.md", baseSet()[2].Content)
	if diff := cmp.Diff(*want.SIP, e.SIP); diff != "" {
		t.Errorf("stored SIP differs (-want +got):\n%s", diff)
	}
	if e.Path != "evaluations/SIP-3.md" || e.Body != want.Body() || e.ContentSHA256 != want.SHA256() || e.Removed {
		t.Errorf("entry %+v", e)
	}
	if e.Current.Version != "1.0.0" || e.Current.CommitSHA != "c1" || !e.Current.SyncedAt.Equal(t0) || e.Current.ContentSHA256 != want.SHA256() {
		t.Errorf("current version %+v", e.Current)
	}
	if byNum, err := s.EntryByNumber(ctx, 3); err != nil || byNum.ID != "gamma" {
		t.Errorf("EntryByNumber(3) = %v, %v", byNum, err)
	}
	content, err := s.Content(ctx, "gamma")
	if err != nil || string(content) != string(baseSet()[2].Content) {
		t.Errorf("Content = %q, %v", content, err)
	}
	st, err := s.SyncState(ctx)
	if err != nil || st.Generation != 1 || st.CommitSHA != "c1" || st.Source != "test" || !st.SyncedAt.Equal(t0) {
		t.Errorf("SyncState = %+v, %v", st, err)
	}
}

func testResync(t *testing.T, s registry.Store) {
	ctx := t.Context()
	mustSync(t, s, baseSet(), "c1", t0)
	r := mustSync(t, s, baseSet(), "c1", t0.Add(time.Hour))
	if r.Applied || !r.UpToDate || len(r.Added)+len(r.Changed)+len(r.Deprecated) != 0 {
		t.Errorf("re-sync report %+v", r)
	}
	// The same files without a commit (a folder) are compared, and equal.
	r = mustSync(t, s, baseSet(), "", t0.Add(time.Hour))
	if r.Applied || r.UpToDate || len(r.Unchanged) != 3 {
		t.Errorf("folder re-sync report %+v", r)
	}
	if st, _ := s.SyncState(ctx); st.Generation != 1 || !st.SyncedAt.Equal(t0) {
		t.Errorf("re-sync wrote: %+v", st)
	}
	// A new commit that touches no SIP is recorded, and changes no SIP.
	r = mustSync(t, s, baseSet(), "c2", t0.Add(time.Hour))
	if !r.Applied || len(r.Unchanged) != 3 {
		t.Errorf("new commit report %+v", r)
	}
	if vs, _ := s.Versions(ctx, "alpha"); len(vs) != 1 {
		t.Errorf("versions %+v", vs)
	}
	if st, _ := s.SyncState(ctx); st.Generation != 2 || st.CommitSHA != "c2" {
		t.Errorf("state %+v", st)
	}
}

func testChange(t *testing.T, s registry.Store) {
	ctx := t.Context()
	files := baseSet()
	mustSync(t, s, files, "c1", t0)
	files[1] = siptest.Edit(files[1], "1.1.0", "2026-02-01", "A new paragraph.")
	r := mustSync(t, s, files, "c2", t0.Add(time.Hour))
	if !slices.Equal(r.Changed, []string{"beta"}) || !slices.Equal(r.Unchanged, []string{"alpha", "gamma"}) {
		t.Fatalf("report %+v", r)
	}
	vs, err := s.Versions(ctx, "beta")
	if err != nil || len(vs) != 2 {
		t.Fatalf("Versions = %+v, %v", vs, err)
	}
	if vs[0].Version != "1.0.0" || vs[0].CommitSHA != "c1" || vs[1].Version != "1.1.0" || vs[1].CommitSHA != "c2" || vs[0].ID >= vs[1].ID {
		t.Errorf("versions %+v", vs)
	}
	e, _ := s.Entry(ctx, "beta")
	if e.Current.ID != vs[1].ID || e.SIP.Version != "1.1.0" {
		t.Errorf("entry points at %+v", e.Current)
	}
	if content, _ := s.Content(ctx, "beta"); string(content) != string(files[1].Content) {
		t.Errorf("content not updated")
	}
}

func testInvalidNotApplied(t *testing.T, s registry.Store) {
	ctx := t.Context()
	files := baseSet()
	mustSync(t, s, files, "c1", t0)
	for name, bad := range map[string][]registry.File{
		"edit without version bump": {files[0], registry.File{Path: files[1].Path, Content: append(append([]byte{}, files[1].Content...), "More.\n"...)}, files[2]},
		"broken YAML":               {files[0], files[1], registry.File{Path: files[2].Path, Content: []byte("---\nsip: [\n---\n")}},
		"missing prerequisite":      {files[0], siptest.Edit(siptest.SIP(2, "beta", "active", "zeta"), "1.1.0", "2026-02-01", "x"), files[2]},
	} {
		r, err := registry.Sync(ctx, s, registry.Source{Files: bad, Commit: "c2", Name: "test"}, t0.Add(time.Hour))
		var ve *registry.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, registry.ErrInvalid) || r == nil || r.Applied || len(r.Problems) == 0 {
			t.Errorf("%s: err %v, report %+v", name, err, r)
		}
	}
	if st, _ := s.SyncState(ctx); st.Generation != 1 || st.CommitSHA != "c1" {
		t.Errorf("an invalid set was applied: %+v", st)
	}
	// A source without any SIP (a wrong folder or ref) deprecates nothing.
	if _, err := registry.Sync(ctx, s, registry.Source{Commit: "c3", Name: "empty",
		Load: func(context.Context) ([]registry.File, error) { return nil, nil }}, t0); !errors.Is(err, registry.ErrEmptySource) {
		t.Errorf("empty source: %v", err)
	}
	if es, _ := s.Entries(ctx, registry.EntryFilter{}); len(es) != 3 {
		t.Errorf("an empty source removed SIPs: %v", ids(es))
	}
}

func testRemoved(t *testing.T, s registry.Store) {
	ctx := t.Context()
	files := append(baseSet(), siptest.SIP(4, "delta", "active"))
	mustSync(t, s, files, "c1", t0)
	r := mustSync(t, s, files[:3], "c2", t0.Add(time.Hour))
	if !slices.Equal(r.Deprecated, []string{"delta"}) {
		t.Fatalf("report %+v", r)
	}
	if es, _ := s.Entries(ctx, registry.EntryFilter{}); slices.Contains(ids(es), "delta") {
		t.Errorf("removed SIP still listed: %v", ids(es))
	}
	e, err := s.Entry(ctx, "delta")
	if err != nil || !e.Removed || e.Status != registry.StatusDeprecated {
		t.Errorf("removed entry %+v, %v", e, err)
	}
	if all, _ := s.Entries(ctx, registry.EntryFilter{IncludeRemoved: true}); len(all) != 4 {
		t.Errorf("IncludeRemoved lists %v", ids(all))
	}
	if vs, _ := s.Versions(ctx, "delta"); len(vs) != 1 {
		t.Errorf("history lost: %v", vs)
	}
	// Its number is never reused.
	_, err = registry.Sync(ctx, s, registry.Source{Files: append(files[:3:3], siptest.SIP(4, "epsilon", "active")), Commit: "c3"}, t0)
	if !errors.Is(err, registry.ErrInvalid) {
		t.Errorf("reusing a removed SIP's number: %v", err)
	}
	// The file comes back: the SIP is live again.
	r = mustSync(t, s, files, "c4", t0.Add(2*time.Hour))
	if !slices.Equal(r.Changed, []string{"delta"}) {
		t.Errorf("revival report %+v", r)
	}
	if e, _ := s.Entry(ctx, "delta"); e.Removed || e.Status != registry.StatusActive {
		t.Errorf("revived entry %+v", e)
	}
}

func testFilters(t *testing.T, s registry.Store) {
	ctx := t.Context()
	files := append(baseSet(),
		siptest.Set(siptest.SIP(4, "doc", "active"), "type: ", "type: process"),
		siptest.Set(siptest.SIP(5, "other", "active"), "module: ", "module: safety"))
	files[3] = siptest.Set(files[3], "executable:", "")
	files[3] = siptest.Set(files[3], "  handler:", "")
	mustSync(t, s, files, "c1", t0)
	for name, tt := range map[string]struct {
		f    registry.EntryFilter
		want []string
	}{
		"all":             {registry.EntryFilter{}, []string{"alpha", "beta", "gamma", "doc", "other"}},
		"evaluations":     {registry.EntryFilter{EvaluationOnly: true}, []string{"alpha", "beta", "gamma", "other"}},
		"module":          {registry.EntryFilter{Module: "safety"}, []string{"other"}},
		"status":          {registry.EntryFilter{Statuses: []registry.Status{registry.StatusDraft}}, []string{"gamma"}},
		"type":            {registry.EntryFilter{Types: []registry.Type{registry.TypeProcess}}, []string{"doc"}},
		"two statuses":    {registry.EntryFilter{Statuses: []registry.Status{registry.StatusDraft, registry.StatusActive}, EvaluationOnly: true}, []string{"alpha", "beta", "gamma", "other"}},
		"nothing matches": {registry.EntryFilter{Module: "nope"}, nil},
	} {
		es, err := s.Entries(ctx, tt.f)
		if err != nil || !slices.Equal(ids(es), tt.want) {
			t.Errorf("%s: %v, %v; want %v", name, ids(es), err, tt.want)
		}
	}
}

func testStalePlan(t *testing.T, s registry.Store) {
	ctx := t.Context()
	plan, _, err := registry.PlanSync(ctx, s, registry.Source{Files: baseSet(), Commit: "c1"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, s, []registry.File{siptest.SIP(9, "other", "active")}, "c0", t0)
	if err := s.Apply(ctx, plan); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("stale plan applied: %v", err)
	}
	if es, _ := s.Entries(ctx, registry.EntryFilter{}); !slices.Equal(ids(es), []string{"other"}) {
		t.Errorf("entries %v", ids(es))
	}
}

// planFor builds a plan straight from files, skipping the engine, to check
// that the database refuses what the engine would have caught.
func planFor(t *testing.T, s registry.Store, files ...registry.File) *registry.Plan {
	t.Helper()
	st, err := s.SyncState(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := &registry.Plan{BaseGeneration: st.Generation, Commit: "raw", Source: "test", At: t0}
	for _, d := range registry.ParseFiles(files) {
		if d.SIP == nil {
			t.Fatalf("%s: %v", d.Path, d.Problems)
		}
		p.Added = append(p.Added, &registry.Change{Entry: &registry.Entry{SIP: *d.SIP, Path: d.Path, Body: d.Body(),
			ContentSHA256: d.SHA256()}, Content: []byte("x"), NewVersion: true})
	}
	return p
}

func testConstraints(t *testing.T, s registry.Store) {
	ctx := t.Context()
	for name, tt := range map[string]struct {
		files []registry.File
		want  error
	}{
		"duplicate number":     {[]registry.File{siptest.SIP(1, "a", "active"), siptest.SIP(1, "b", "active")}, registry.ErrConflict},
		"duplicate id":         {[]registry.File{siptest.SIP(1, "a", "active"), siptest.SIP(2, "a", "active")}, registry.ErrConflict},
		"missing prerequisite": {[]registry.File{siptest.SIP(1, "a", "active", "ghost")}, registry.ErrInvalid},
		"self prerequisite":    {[]registry.File{siptest.SIP(1, "a", "active", "a")}, registry.ErrInvalid},
	} {
		if err := s.Apply(ctx, planFor(t, s, tt.files...)); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", name, err, tt.want)
		}
	}
	bad := planFor(t, s, siptest.SIP(1, "a", "active"))
	bad.Added[0].Entry.Status = "final"
	if err := s.Apply(ctx, bad); !errors.Is(err, registry.ErrInvalid) {
		t.Errorf("bad status: %v", err)
	}
	bad = planFor(t, s, siptest.SIP(1, "a", "active"))
	bad.Added[0].Entry.ID = "Not/Kebab"
	if err := s.Apply(ctx, bad); !errors.Is(err, registry.ErrInvalid) {
		t.Errorf("bad id: %v", err)
	}
	if es, _ := s.Entries(ctx, registry.EntryFilter{IncludeRemoved: true}); len(es) != 0 {
		t.Errorf("refused plans left rows: %v", ids(es))
	}
}

func testAtomic(t *testing.T, s registry.Store) {
	ctx := t.Context()
	mustSync(t, s, baseSet(), "c1", t0)
	plan, problems, err := registry.PlanSync(ctx, s, registry.Source{Files: append(baseSet(), siptest.SIP(4, "delta", "active"), siptest.SIP(5, "epsilon", "active")), Commit: "c2"}, t0)
	if err != nil || len(problems) != 0 {
		t.Fatal(err, problems)
	}
	plan.Added[1].Entry.Number = 1 // the second insert collides, after the first succeeded
	if err := s.Apply(ctx, plan); !errors.Is(err, registry.ErrConflict) {
		t.Fatalf("Apply: %v", err)
	}
	if es, _ := s.Entries(ctx, registry.EntryFilter{IncludeRemoved: true}); len(es) != 3 {
		t.Errorf("partial apply: %v", ids(es))
	}
	if st, _ := s.SyncState(ctx); st.Generation != 1 || st.CommitSHA != "c1" {
		t.Errorf("state moved: %+v", st)
	}
}

func testConcurrentSyncs(t *testing.T, s registry.Store) {
	ctx := t.Context()
	mustSync(t, s, baseSet(), "c0", t0)
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			files := baseSet()
			files[0] = siptest.Edit(files[0], fmt.Sprintf("1.%d.0", i+1), fmt.Sprintf("2026-02-%02d", i+1), fmt.Sprintf("Edit %d.", i))
			files = append(files, siptest.SIP(10+i, fmt.Sprintf("extra-%d", i), "active"))
			_, errs[i] = registry.Sync(context.WithoutCancel(ctx), s, registry.Source{Files: files, Commit: fmt.Sprintf("c%d", i+1)}, t0)
		})
	}
	wg.Wait()
	applied := 0
	for _, err := range errs {
		switch {
		case err == nil:
			applied++
		case errors.Is(err, registry.ErrInvalid): // planned on top of another edit of alpha: its version is no longer newer
		default:
			t.Errorf("sync failed: %v", err)
		}
	}
	if applied == 0 {
		t.Fatal("no sync applied")
	}
	// Whatever won, the registry is exactly one source: one extra SIP
	// live, alpha at that source's version, and the state names its commit.
	st, _ := s.SyncState(ctx)
	live, _ := s.Entries(ctx, registry.EntryFilter{})
	var extras []string
	for _, e := range live {
		if e.Number >= 10 {
			extras = append(extras, e.ID)
		}
	}
	alpha, _ := s.Entry(ctx, "alpha")
	var i int
	fmt.Sscanf(st.CommitSHA, "c%d", &i)
	if len(extras) != 1 || extras[0] != fmt.Sprintf("extra-%d", i-1) || alpha.SIP.Version != fmt.Sprintf("1.%d.0", i) {
		t.Errorf("inconsistent registry: state %+v, extras %v, alpha %s", st, extras, alpha.SIP.Version)
	}
	if st.Generation != int64(1+applied) {
		t.Errorf("generation %d after %d applied syncs", st.Generation, applied)
	}
}

func testCertificationRoundTrip(t *testing.T, s registry.Store) {
	ctx := t.Context()
	files := siptest.Generate(30, 7)
	mustSync(t, s, files, "c1", t0)
	for _, d := range registry.ParseFiles(files) {
		e, err := s.Entry(ctx, d.SIP.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(*d.SIP, e.SIP); diff != "" {
			t.Fatalf("%s differs (-want +got):\n%s", d.SIP.ID, diff)
		}
		if diff := cmp.Diff(d.RawConfig(), e.RawConfig, numbersEqual); diff != "" {
			t.Fatalf("%s raw config differs (-want +got):\n%s", d.SIP.ID, diff)
		}
	}
}

// numbersEqual compares JSON numbers across int64 (YAML) and float64 (JSON).
var numbersEqual = cmp.FilterValues(func(a, b any) bool {
	_, ok1 := number(a)
	_, ok2 := number(b)
	return ok1 && ok2
}, cmp.Comparer(func(a, b any) bool {
	x, _ := number(a)
	y, _ := number(b)
	return x == y
}))

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

// testSecrets: concurrent callers with different candidates all get the
// first secret stored, and it never changes.
func testSecrets(t *testing.T, s registry.Store) {
	ss, ok := s.(registry.SecretStore)
	if !ok {
		t.Fatal("the store keeps no secrets")
	}
	got := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			candidate := bytes.Repeat([]byte{byte(i + 1)}, 32)
			var err error
			if got[i], err = ss.Secret(t.Context(), "record-digest", candidate); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range got {
		if !bytes.Equal(got[i], got[0]) || len(got[i]) != 32 {
			t.Fatalf("caller %d got %x, caller 0 %x; want one secret", i, got[i], got[0])
		}
	}
	again, err := ss.Secret(t.Context(), "record-digest", bytes.Repeat([]byte{0xff}, 32))
	if err != nil || !bytes.Equal(again, got[0]) {
		t.Errorf("the secret changed: %x, %v", again, err)
	}
	other, err := ss.Secret(t.Context(), "another", bytes.Repeat([]byte{0xee}, 32))
	if err != nil || bytes.Equal(other, got[0]) {
		t.Errorf("another name shares the secret: %x, %v", other, err)
	}
}
