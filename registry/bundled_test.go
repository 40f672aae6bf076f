package registry_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/seal"
)

// TestBundledSIPsRaiseTheirVersionWhenTheyChange: a registry that synced
// the bundled SIPs once (every `make run`) refuses a later copy whose
// content changed under the same version (version-not-bumped), so the
// server would not start. testdata/bundled-versions.golden records each
// bundled SIP's version and content hash; a change of content must come
// with a new version, and then go test ./registry -run Bundled -update.
func TestBundledSIPsRaiseTheirVersionWhenTheyChange(t *testing.T) {
	files, err := registry.ReadFS(os.DirFS("../evaluations"), ".", "evaluations")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "bundled-versions.golden")
	recorded := map[string][2]string{} // path → version, hash
	if b, err := os.ReadFile(golden); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if f := strings.Fields(line); len(f) == 3 {
				recorded[f[0]] = [2]string{f[1], f[2]}
			}
		}
	}
	var out strings.Builder
	for _, d := range registry.ParseFiles(files) {
		version, hash := d.SIP.Version, d.SHA256()
		fmt.Fprintf(&out, "%s %s %s\n", d.Path, version, hash)
		was, ok := recorded[d.Path]
		switch {
		case *update:
		case !ok:
			t.Errorf("%s is not recorded: go test ./registry -run Bundled -update", d.Path)
		case was[1] != hash && was[0] == version:
			t.Errorf("%s changed but its version is still %s: raise version and updated_at, or a registry that synced it before refuses it", d.Path, version)
		case was != [2]string{version, hash}:
			t.Errorf("%s is at version %s now, recorded %s: go test ./registry -run Bundled -update", d.Path, version, was[0])
		}
	}
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBundledBenchmarksGiveNothingToTheLongestChoice: opened with the
// development key they are sealed to, the bundled benchmarks' answers are
// the longest choice by far in no question, so always choosing the
// longest choice is no strategy.
func TestBundledBenchmarksGiveNothingToTheLongestChoice(t *testing.T) {
	key, err := seal.ParseKey(evaluations.DevelopmentSealingKey)
	if err != nil {
		t.Fatal(err)
	}
	files, err := registry.ReadFS(os.DirFS("../evaluations"), ".", "evaluations")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range registry.ParseFiles(files) {
		if d.SIP == nil || d.SIP.Config.Benchmark == nil {
			continue
		}
		qs := slices.Clone(d.SIP.Config.Benchmark.Questions)
		for i, q := range qs {
			if q.Sealed == "" {
				continue
			}
			if qs[i].Answer, err = key.Open(registry.SealBinding(d.SIP, q), q.Sealed); err != nil {
				t.Fatalf("%s: question %s does not open with the development key: %v", d.Path, q.ID, err)
			}
		}
		longest, known := registry.LongestChoiceAnswers(qs)
		if longest > 0 {
			t.Errorf("%s: the right choice is the longest by far in %d of %d questions, want none", d.Path, longest, known)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no bundled benchmark checked")
	}
}
