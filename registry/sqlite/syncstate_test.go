package sqlite_test

import (
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/sqlite"
)

// TestSyncStateSeesAnotherHandle: a server keeps the sync state, and a
// sync applied through another handle on the same file (as `sip sync`
// in another process does) is seen by its next read, as is its own.
func TestSyncStateSeesAnotherHandle(t *testing.T) {
	for _, by := range []string{"mapped WAL-index header", "WAL-index header read", "data_version"} {
		t.Run(by, func(t *testing.T) { testSyncStateSeesAnotherHandle(t, by) })
	}
}

func testSyncStateSeesAnotherHandle(t *testing.T, by string) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "registry.db")
	open := func() *sqlite.Store {
		s, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	server, other := open(), open()
	t0 := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	want := func(step string, gen int64, commit string) {
		t.Helper()
		for range 2 { // the second from what was kept
			st, err := server.SyncState(ctx)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			if st.Generation != gen || st.CommitSHA != commit {
				t.Errorf("%s: generation %d, commit %q; want %d, %q", step, st.Generation, st.CommitSHA, gen, commit)
			}
		}
	}
	want("empty", 0, "")
	switch by {
	case "mapped WAL-index header":
		if !sqlite.WALHeaderMapped(server) && runtime.GOOS != "windows" {
			t.Fatal("the WAL-index header is not mapped")
		}
	case "WAL-index header read":
		sqlite.ForgetWALMapping(server)
		want("empty, by a read", 0, "")
	case "data_version":
		sqlite.ForgetWALHeader(server)
		want("empty, by data_version", 0, "")
	}
	files := []registry.File{siptest.SIP(1, "alpha", "active")}
	if _, err := registry.Sync(ctx, other, registry.Source{Files: files, Commit: "c1", Name: "t"}, t0); err != nil {
		t.Fatal(err)
	}
	want("after the other handle's sync", 1, "c1")
	files = append(files, siptest.SIP(2, "beta", "active"))
	if _, err := registry.Sync(ctx, server, registry.Source{Files: files, Commit: "c2", Name: "t"}, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	want("after its own sync", 2, "c2")
	if _, err := registry.Sync(ctx, other, registry.Source{Files: files[:1], Commit: "c3", Name: "t"}, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	want("after the other handle's second sync", 3, "c3")
}

// TestSyncStateConcurrent: readers share the kept state while a sync
// lands (run with -race); afterwards every reader sees it.
func TestSyncStateConcurrent(t *testing.T) {
	ctx := t.Context()
	s := MustOpen(t)
	t0 := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if _, err := s.SyncState(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	if _, err := registry.Sync(ctx, s, registry.Source{Files: []registry.File{siptest.SIP(1, "alpha", "active")}, Commit: "c1", Name: "t"}, t0); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if st, err := s.SyncState(ctx); err != nil || st.Generation != 1 {
		t.Errorf("after the sync: generation %d, %v; want 1", st.Generation, err)
	}
}

// BenchmarkSyncState asks for the sync state of a registry nothing
// writes to, as every API request does.
func BenchmarkSyncState(b *testing.B) {
	s := MustOpen(b)
	if _, err := registry.Sync(b.Context(), s, registry.Source{Files: []registry.File{siptest.SIP(1, "alpha", "active")}, Commit: "c1", Name: "t"}, time.Now()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.SyncState(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
