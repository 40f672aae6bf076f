package registry_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

// TestRenumberedCorpus: the benchmark corpus (SafeMolt's SIPs ×N) gives
// every copy its own numbers, files and ids, and renames prerequisites
// with the ids they name, so copies neither collide nor lose an edge.
func TestRenumberedCorpus(t *testing.T) {
	t.Parallel()
	real, err := siptest.CorpusFiles(os.DirFS("testdata/safemolt"))
	if err != nil || len(real) != 28 {
		t.Fatalf("read %d corpus files (%v), want 28", len(real), err)
	}
	files := siptest.Renumber(real, 3)
	if len(files) != 84 {
		t.Fatalf("%d files, want 84", len(files))
	}
	docs := registry.ParseFiles(files)
	paths := map[string]bool{}
	for i, d := range docs {
		if paths[d.Path] {
			t.Errorf("%s twice", d.Path)
		}
		paths[d.Path] = true
		if d.SIP == nil {
			t.Fatalf("%s: not parsed", d.Path)
		}
		if want := registry.FileName(i + 1); !strings.HasSuffix(d.Path, "/"+want) || d.SIP.Number != i+1 {
			t.Errorf("%s declares sip %d, want %s", d.Path, d.SIP.Number, want)
		}
	}
	var prereqs [][]string
	for _, d := range docs {
		if strings.HasPrefix(d.SIP.ID, "non-spamminess") {
			prereqs = append(prereqs, d.SIP.Prerequisites)
		}
	}
	want := [][]string{{"identity-check-0"}, {"identity-check-1"}, {"identity-check-2"}}
	if !slices.EqualFunc(prereqs, want, slices.Equal) {
		t.Errorf("SIP-5's copies require %q, want %q", prereqs, want)
	}
}
