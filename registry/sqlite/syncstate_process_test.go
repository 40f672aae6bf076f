package sqlite_test

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/sqlite"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// syncHelperEnv names, for the test binary run as another process, the
// database to sync, the generation (its count of SIPs) and whether to
// checkpoint the WAL with TRUNCATE afterwards.
const syncHelperEnv = "SIP_SQLITE_SYNC_HELPER"

// TestSyncStateSeesAnotherProcess: a server holding the WAL-index header
// mapped sees every sync another process applies (as `sip sync` does),
// also after that process checkpointed and truncated the WAL (the next
// commit restarts it from its first frame, with new salts), and after the
// server's store was closed and opened again (the -shm file deleted with
// the last connection and made anew).
func TestSyncStateSeesAnotherProcess(t *testing.T) {
	if os.Getenv(syncHelperEnv) != "" {
		t.Skip("run as the helper process")
	}
	if runtime.GOOS == "windows" || testing.Short() {
		t.Skip("the mapping is unix only; runs other processes")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "registry.db")
	server := sqlitetest.OpenAt(t, path)
	want := func(step string, gen int64) {
		t.Helper()
		for range 2 { // the second from what was kept
			st, err := server.SyncState(ctx)
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			if commit := "c" + strconv.FormatInt(gen, 10); st.Generation != gen || (gen > 0 && st.CommitSHA != commit) {
				t.Fatalf("%s: generation %d, commit %q; want %d, %q", step, st.Generation, st.CommitSHA, gen, commit)
			}
		}
		if !sqlite.WALHeaderMapped(server) {
			t.Fatalf("%s: the WAL-index header is not mapped", step)
		}
	}
	helper := func(gen int, truncate bool) {
		t.Helper()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSyncStateHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%t", syncHelperEnv, path, gen, truncate))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helper process, generation %d: %v\n%s", gen, err, out)
		}
	}
	want("empty", 0)
	gen := int64(0)
	for _, truncate := range []bool{false, true, false, true, true, false} {
		gen++
		helper(int(gen), truncate)
		want(fmt.Sprintf("after the other process's sync %d (WAL truncated after: %t)", gen, truncate), gen)
	}
	server.Close()
	helper(int(gen+1), true) // alone on the file: its last connection deletes the -shm file
	gen++
	if _, err := os.Stat(path + "-shm"); err == nil {
		t.Log("the -shm file outlived the last connection")
	}
	server = sqlitetest.OpenAt(t, path)
	want("opened again", gen)
	gen++
	helper(int(gen), false)
	want("opened again, after another sync", gen)
}

// TestSyncStateHelperProcess is the other process of
// TestSyncStateSeesAnotherProcess: it syncs generation n and, if told,
// checkpoints the WAL with TRUNCATE.
func TestSyncStateHelperProcess(t *testing.T) {
	env := os.Getenv(syncHelperEnv)
	if env == "" {
		// Run as a test of its own it has nothing to do (and passes:
		// CI fails on a skipped test).
		return
	}
	var path string
	var gen int
	var truncate bool
	for i, f := range strings.Split(env, "|") {
		switch i {
		case 0:
			path = f
		case 1:
			gen, _ = strconv.Atoi(f)
		case 2:
			truncate = f == "true"
		}
	}
	ctx := t.Context()
	s := sqlitetest.OpenAt(t, path)
	var files []registry.File
	for i := 1; i <= gen; i++ {
		files = append(files, siptest.SIP(i, fmt.Sprintf("e%d", i), "active"))
	}
	at := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC).Add(time.Duration(gen) * time.Minute)
	if _, err := registry.Sync(ctx, s, registry.Source{Files: files, Commit: "c" + strconv.Itoa(gen), Name: "t"}, at); err != nil {
		t.Fatal(err)
	}
	if !truncate {
		return
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var busy, logFrames, done int
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		t.Fatal(err)
	}
	if busy != 0 {
		t.Fatalf("the checkpoint could not truncate the WAL (busy %d, %d frames, %d moved)", busy, logFrames, done)
	}
}
