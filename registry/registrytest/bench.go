package registrytest

import (
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/gitrev"
	"github.com/sipregistry/sip/registry/siptest"
)

// BenchSync measures syncing a local git repository of n SIPs into stores
// that open makes: a full sync into an empty registry, a re-sync of the
// same commit, and a sync of a commit that changes one file. Each includes
// reading the commit with go-git, as `sip sync --repo` does.
func BenchSync(b *testing.B, n int, open func(b *testing.B) registry.Store) {
	files := siptest.Generate(n, 11)
	tree := map[string]string{}
	for _, f := range files {
		tree[f.Path] = string(f.Content)
	}
	repo := siptest.NewRepo(b, tree)
	first := siptest.Git(b, repo, "rev-parse", "HEAD")
	edited := siptest.Edit(files[n/2], "9.0.0", "2026-06-01T00:00:00Z", "One more paragraph.")
	second := siptest.Commit(b, repo, "edit one SIP", map[string]string{edited.Path: string(edited.Content)})

	sync := func(b *testing.B, s registry.Store, ref string) *registry.SyncReport {
		src, err := gitrev.Fetch(b.Context(), gitrev.FetchOptions{Repo: repo, Ref: ref})
		if err != nil {
			b.Fatal(err)
		}
		r, err := registry.Sync(b.Context(), s, src, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s := open(b)
			b.StartTimer()
			if r := sync(b, s, first); len(r.Added) != n {
				b.Fatalf("added %d", len(r.Added))
			}
		}
	})
	b.Run("same-commit", func(b *testing.B) {
		s := open(b)
		sync(b, s, first)
		for b.Loop() {
			if r := sync(b, s, first); r.Applied {
				b.Fatal("re-sync applied something")
			}
		}
	})
	b.Run("one-file", func(b *testing.B) {
		s := open(b)
		for b.Loop() {
			b.StopTimer()
			s.Close()
			s = open(b)
			sync(b, s, first)
			b.StartTimer()
			if r := sync(b, s, second); len(r.Changed) != 1 {
				b.Fatalf("changed %v", r.Changed)
			}
		}
	})
}
