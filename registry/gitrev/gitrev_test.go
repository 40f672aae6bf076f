package gitrev_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/gitrev"
	"github.com/sipregistry/sip/registry/siptest"
)

func paths(files []registry.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	slices.Sort(out)
	return out
}

func TestRevisionFiles(t *testing.T) {
	t.Parallel()
	dir := siptest.NewRepo(t, map[string]string{
		"evaluations/SIP-1.md":       "one",
		"evaluations/README.md":      "index",
		"evaluations/sub/SIP-2.md":   "two",
		"evaluations/.hidden/SIP.md": "hidden",
		"docs/SIP-9.md":              "elsewhere",
	})
	first := siptest.Git(t, dir, "rev-parse", "HEAD")
	siptest.Commit(t, dir, "second", map[string]string{"evaluations/SIP-1.md": "", "evaluations/SIP-3.md": "three"})

	r, err := gitrev.Open(filepath.Join(dir, "evaluations"), first)
	if err != nil {
		t.Fatal(err)
	}
	evals := filepath.Join(dir, "evaluations")
	got, err := r.Files(evals)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.ToSlash(evals) + "/SIP-1.md", filepath.ToSlash(evals) + "/sub/SIP-2.md"}
	if !slices.Equal(paths(got), want) {
		t.Errorf("folder: got %v, want %v", paths(got), want)
	}
	for _, f := range got {
		if filepath.Base(f.Path) == "SIP-1.md" && string(f.Content) != "one" {
			t.Errorf("content = %q", f.Content)
		}
	}

	one, err := r.Files(filepath.Join(evals, "SIP-1.md"))
	if err != nil || len(one) != 1 || string(one[0].Content) != "one" {
		t.Errorf("one file: %v, %v", one, err)
	}
	none, err := r.Files(filepath.Join(dir, "nothing-here"))
	if err != nil || len(none) != 0 {
		t.Errorf("missing folder: %v, %v", none, err)
	}
	if _, err := r.Files(t.TempDir()); err == nil {
		t.Error("a path outside the repository must be an error")
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	if _, err := gitrev.Open(t.TempDir(), "HEAD"); !errors.Is(err, gitrev.ErrNotRepository) {
		t.Errorf("not a repository: %v", err)
	}
	dir := siptest.NewRepo(t, map[string]string{"a.md": "x"})
	if _, err := gitrev.Open(dir, "no-such-branch"); !errors.Is(err, gitrev.ErrUnknownRevision) {
		t.Errorf("unknown revision: %v", err)
	}
	if _, err := gitrev.Open(dir, "main~5"); !errors.Is(err, gitrev.ErrUnknownRevision) {
		t.Errorf("unknown ancestor: %v", err)
	}
}
