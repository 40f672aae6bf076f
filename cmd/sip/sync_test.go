package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry/siptest"
)

func TestSyncAndMigrateExitCodes(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "registry.db")
	empty := t.TempDir()
	repo := siptest.NewRepo(t, map[string]string{"evaluations/SIP-2.md": string(siptest.SIP(2, "poaw", "active").Content)})
	bare := siptest.NewRepo(t, map[string]string{"docs/x.md": "no SIPs here"})
	for _, tt := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"neither source", []string{"sync", "--db", db}, exitUsage, "exactly one of --dir or --repo"},
		{"both sources", []string{"sync", "--db", db, "--dir", bundled, "--repo", repo}, exitUsage, "exactly one"},
		{"ref without repo", []string{"sync", "--db", db, "--dir", bundled, "--ref", "main"}, exitUsage, "--ref goes with --repo"},
		{"unknown format", []string{"sync", "--db", db, "--dir", bundled, "--format", "xml"}, exitUsage, "unknown --format"},
		{"missing folder", []string{"sync", "--db", db, "--dir", "/no/such/dir"}, exitNoInput, "no such file"},
		{"a file, not a folder", []string{"sync", "--db", db, "--dir", bundled + "/SIP-2.md"}, exitNoInput, "not a folder"},
		{"empty folder", []string{"sync", "--db", db, "--dir", empty}, exitNoInput, "holds no SIP"},
		{"commit without SIPs", []string{"sync", "--db", db, "--repo", bare}, exitNoInput, "holds no SIP"},
		{"unknown ref", []string{"sync", "--db", db, "--repo", repo, "--ref", "nope"}, exitUsage, "unknown revision"},
		{"not a repository", []string{"sync", "--db", db, "--repo", empty}, exitNoInput, "cannot read repository"},
		{"unreachable remote", []string{"sync", "--db", db, "--repo", "http://127.0.0.1:1/x.git"}, exitNoInput, "cannot read repository"},
		{"unsupported database", []string{"sync", "--db", "mysql://x", "--dir", bundled}, exitConfig, "use postgres://"},
		{"unreachable database", []string{"sync", "--db", "postgres://postgres@127.0.0.1:1/x?connect_timeout=1", "--dir", bundled}, exitUnavailable, "unavailable"},
		{"migrate: unsupported database", []string{"migrate", "--db", "mysql://x"}, exitConfig, "use postgres://"},
		{"migrate: extra argument", []string{"migrate", "extra"}, exitUsage, "unexpected argument"},
		{"ok", []string{"sync", "--db", db, "--dir", bundled}, exitOK, "8  sip-process, poaw"},
		{"ok again", []string{"sync", "--db", db, "--dir", bundled}, exitOK, "nothing to change"},
		{"migrate ok", []string{"migrate", "--db", db}, exitOK, "migrated sqlite:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runSip(t, tt.args...)
			if code != tt.code || !strings.Contains(out+errOut, tt.out) {
				t.Errorf("got exit %d, want %d saying %q\n%s%s", code, tt.code, tt.out, out, errOut)
			}
		})
	}
	// The refused syncs (empty folder, empty commit) deprecated nothing:
	// the registry still holds the 8 SIPs, unchanged.
	code, out, _ := runSip(t, "sync", "--db", db, "--dir", bundled, "--format", "json")
	var rep struct {
		Applied    bool     `json:"applied"`
		Unchanged  []string `json:"unchanged"`
		Deprecated []string `json:"deprecated"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitOK || rep.Applied || len(rep.Unchanged) != 8 || len(rep.Deprecated) != 0 {
		t.Errorf("json report: %d %+v %v\n%s", code, rep, err, out)
	}
}
