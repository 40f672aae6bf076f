package registry_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// TestLayout: the one definition of a SIP file, as every consumer reads it.
func TestLayout(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		reads, placed bool
		number        int
	}{
		{"evaluations/SIP-12.md", true, true, 12},
		{"evaluations/extra/SIP-12.md", true, false, 0},
		{"evaluations/deep/er/notes.md", true, false, 0},
		{"evaluations/notes.md", true, true, 0},
		{"evaluations/SIP-012.md", true, true, 0},
		{"evaluations/SIP-0.md", true, true, 0},
		{"evaluations/sip-12.md", true, true, 0},
		{"evaluations/README.md", false, true, 0},
		{"evaluations/extra/README.md", false, false, 0},
		{"evaluations/.hidden/SIP-3.md", false, false, 0},
		{"evaluations/.SIP-3.md", false, true, 0},
		{"evaluations/embed.go", false, true, 0},
		{"evaluationsX/SIP-3.md", false, false, 0},
		{"docs/SIP-3.md", false, false, 0},
		{"SIP-3.md", false, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := registry.Reads("evaluations", tt.name); got != tt.reads {
				t.Errorf("Reads = %v, want %v", got, tt.reads)
			}
			if got := registry.Placed("evaluations", tt.name); got != tt.placed {
				t.Errorf("Placed = %v, want %v", got, tt.placed)
			}
			if n, ok := registry.NumberOf("evaluations", tt.name); n != tt.number || ok != (tt.number > 0) {
				t.Errorf("NumberOf = %d, %v; want %d", n, ok, tt.number)
			}
		})
	}
}

// TestSyncRefusesASIPInASubfolder: the registry never serves a SIP that
// the App's number and approval checks would not see.
func TestSyncRefusesASIPInASubfolder(t *testing.T) {
	t.Parallel()
	s := sqlitetest.Open(t)
	hidden := siptest.SIP(13, "hidden", "active")
	hidden.Path = "evaluations/extra/SIP-13.md"
	_, err := registry.Sync(t.Context(), s, registry.Source{Files: []registry.File{siptest.SIP(1, "alpha", "active"), hidden}, Commit: "c1"}, time.Now())
	var invalid *registry.ValidationError
	if !errors.As(err, &invalid) {
		t.Fatalf("sync = %v, want a ValidationError", err)
	}
	found := false
	for _, p := range invalid.Problems {
		found = found || p.Rule == "file-location" && p.Path == hidden.Path
	}
	if !found {
		t.Errorf("problems %v lack file-location on %s", invalid.Problems, hidden.Path)
	}
	if _, err := s.Entry(t.Context(), "hidden"); err == nil {
		t.Error("the subfolder SIP is in the registry")
	}
}
