package main

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sipregistry/sip/registry"
)

type jsonProblems struct {
	Files    int                `json:"files"`
	Problems []registry.Problem `json:"problems"`
}

func validateJSON(t *testing.T, args ...string) jsonProblems {
	t.Helper()
	_, out, errOut := runSip(t, append([]string{"validate", "--format", "json"}, args...)...)
	var got jsonProblems
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %v\n%s%s", args, err, out, errOut)
	}
	return got
}

// TestValidateAloneAsInItsFolder validates every bundled and corpus SIP
// alone and in its folder: the file gets the same problems either way.
func TestValidateAloneAsInItsFolder(t *testing.T) {
	t.Parallel()
	for _, root := range []string{bundled, "../../registry/testdata/safemolt"} {
		var dirs []string
		err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				dirs = append(dirs, filepath.ToSlash(p))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range dirs {
			names, _ := filepath.Glob(filepath.Join(dir, "*.md"))
			if len(names) == 0 {
				continue
			}
			folder := validateJSON(t, dir).Problems
			for _, name := range names {
				name = filepath.ToSlash(name)
				if !registry.IsSIPFile(name) {
					continue
				}
				t.Run(strings.TrimPrefix(name, "../../"), func(t *testing.T) {
					var want []registry.Problem
					for _, p := range folder {
						if p.Path == name {
							want = append(want, p)
						}
					}
					got := validateJSON(t, name).Problems
					if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("alone vs in %s (-folder +alone):\n%s", dir, diff)
					}
				})
			}
		}
	}
}

// TestValidateOneFileReadsItsRepository: a link to a missing anchor of
// another SIP fails the file alone, as it fails the folder in CI; a link
// starting with / is resolved from the repository's root.
func TestValidateOneFileReadsItsRepository(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "evaluations"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(bundled, "SIP-1.md"), filepath.Join(repo, "evaluations", "SIP-1.md"))
	b, err := os.ReadFile(filepath.Join(bundled, "SIP-2.md"))
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "\nSee [the process](SIP-1.md#no-such-anchor), [the guide](/docs/guide.md) and [the notes](/docs/notes.md).\n"...)
	if err := os.WriteFile(filepath.Join(repo, "evaluations", "SIP-2.md"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "docs", "guide.md"), []byte("# Guide\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(repo, "evaluations", "SIP-2.md")
	got := validateJSON(t, file)
	var links []string
	for _, p := range got.Problems {
		if p.Rule == "body-links" {
			links = append(links, p.Message)
		}
	}
	want := []string{
		"link to SIP-1.md#no-such-anchor: no heading has the anchor #no-such-anchor",
		"link to /docs/notes.md: no such file in the repository",
	}
	slices.Sort(links)
	slices.Sort(want)
	if got.Files != 1 || !slices.Equal(links, want) {
		t.Errorf("files %d, body-links %q; want 1 file and %q", got.Files, links, want)
	}
}

// TestValidateNoticesUncheckedLinks: outside a repository, a link that
// leaves the folder read cannot be judged, and one notice says so.
func TestValidateNoticesUncheckedLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(bundled, "SIP-2.md"))
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "\nSee [a](../a.md) and [b](../b.md).\n"...)
	if err := os.WriteFile(filepath.Join(dir, "SIP-2.md"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runSip(t, "validate", filepath.Join(dir, "SIP-2.md"))
	if code != exitOK || strings.Count(errOut, "note:") != 1 || !strings.Contains(errOut, "2 linked paths lie outside") || !strings.Contains(errOut, path.Base(filepath.Dir(dir))+"/a.md") {
		t.Errorf("exit %d, stderr %q; want 0 and one notice naming both links", code, errOut)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
