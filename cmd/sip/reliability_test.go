package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/sqlite"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// sipBinary builds the sip command once per test run.
func sipBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sip-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "sip")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// twoCommits builds a repository whose second commit edits every SIP of
// the first and adds more, so a sync between them writes a lot.
func twoCommits(t *testing.T, n int) (repo, a, b string, filesA, filesB []registry.File) {
	t.Helper()
	filesA = siptest.Generate(n, 3)
	m := map[string]string{}
	for _, f := range filesA {
		m[f.Path] = string(f.Content)
	}
	repo = siptest.NewRepo(t, m)
	a = siptest.Git(t, repo, "rev-parse", "HEAD")
	more := siptest.Generate(n+n/5, 3)
	m = map[string]string{}
	for i, f := range more {
		if i < n {
			f = siptest.Edit(f, "2.0.0", "2026-03-01T00:00:00Z", "Revised.")
		}
		filesB = append(filesB, f)
		m[f.Path] = string(f.Content)
	}
	b = siptest.Commit(t, repo, "revise everything", m)
	return repo, a, b, filesA, filesB
}

// checkAtOneCommit asserts the registry is exactly at one of the two
// commits: the state names it and every SIP holds that commit's content.
func checkAtOneCommit(t *testing.T, db string, a, b string, filesA, filesB []registry.File) string {
	t.Helper()
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	state, err := st.SyncState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]registry.File{a: filesA, b: filesB}[state.CommitSHA]
	if want == nil {
		t.Fatalf("registry at unknown commit %q", state.CommitSHA)
	}
	entries, err := st.Entries(context.Background(), registry.EntryFilter{IncludeRemoved: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(want) {
		t.Fatalf("at %s: %d entries, want %d", state.CommitSHA[:7], len(entries), len(want))
	}
	for i, d := range registry.ParseFiles(want) {
		e := entries[i]
		if e.ID != d.SIP.ID || e.ContentSHA256 != d.SHA256() || e.Current.ContentSHA256 != d.SHA256() || e.Current.CommitSHA == "" {
			t.Fatalf("at %s: %s holds %s (version row %s), want %s", state.CommitSHA[:7], e.ID, e.ContentSHA256[:7], e.Current.ContentSHA256, d.SHA256()[:7])
		}
	}
	return state.CommitSHA
}

// TestSyncKilledMidway kills `sip sync` with SIGKILL at random moments
// across a whole sync and checks the registry is always at the old or the
// new commit, and that the sync can then be finished.
func TestSyncKilledMidway(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary many times")
	}
	t.Parallel()
	bin := sipBinary(t)
	repo, a, b, filesA, filesB := twoCommits(t, 250)
	template := filepath.Join(t.TempDir(), "template.db")
	if out, err := exec.Command(bin, "sync", "--db", template, "--repo", repo, "--ref", a).CombinedOutput(); err != nil {
		t.Fatalf("first sync: %v\n%s", err, out)
	}
	fresh := func(i int) string {
		db := filepath.Join(t.TempDir(), fmt.Sprintf("r%d.db", i))
		raw, err := os.ReadFile(template)
		if err != nil || os.WriteFile(db, raw, 0o644) != nil {
			t.Fatal(err)
		}
		return db
	}
	// How long an uninterrupted sync takes, to spread the kills over it.
	start := time.Now()
	if out, err := exec.Command(bin, "sync", "--db", fresh(-1), "--repo", repo, "--ref", b).CombinedOutput(); err != nil {
		t.Fatalf("timing sync: %v\n%s", err, out)
	}
	full := time.Since(start)

	seen := map[string]int{}
	for i := range 20 {
		db := fresh(i)
		cmd := exec.Command(bin, "sync", "--db", db, "--repo", repo, "--ref", b)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Half the kills anywhere, half late, where the transaction runs.
		delay := rand.Int64N(int64(full) * 11 / 10)
		if i%2 == 1 {
			delay = int64(full)/2 + rand.Int64N(int64(full)*6/10)
		}
		time.Sleep(time.Duration(delay))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		seen[checkAtOneCommit(t, db, a, b, filesA, filesB)[:7]]++
		if out, err := exec.Command(bin, "sync", "--db", db, "--repo", repo, "--ref", b).CombinedOutput(); err != nil {
			t.Fatalf("resume: %v\n%s", err, out)
		}
		if got := checkAtOneCommit(t, db, a, b, filesA, filesB); got != b {
			t.Fatalf("resumed sync at %s", got)
		}
	}
	t.Logf("a sync takes %v; after SIGKILL the registry was at %v (old %s, new %s)", full, seen, a[:7], b[:7])
}

// TestConcurrentSyncProcesses runs two sync processes at once on one
// database, to different commits.
func TestConcurrentSyncProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	bin := sipBinary(t)
	repo, a, b, filesA, filesB := twoCommits(t, 200)
	db := filepath.Join(t.TempDir(), "r.db")
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	for i, ref := range []string{a, b} {
		wg.Go(func() {
			outs[i], _ = exec.Command(bin, "sync", "--db", db, "--repo", repo, "--ref", ref).CombinedOutput()
		})
	}
	wg.Wait()
	t.Logf("sync a: %s\nsync b: %s", outs[0], outs[1])
	checkAtOneCommit(t, db, a, b, filesA, filesB)
}
