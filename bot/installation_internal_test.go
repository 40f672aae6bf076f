package bot

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// TestRefreshOlderThanARemovalCannotRestoreIt forces the interleaving in
// which a refresh of an installation's repositories asks GitHub, GitHub
// answers with a repository that is being removed, and the removal is
// processed before the answer is written (another replica's, or a removal
// whose delivery overtook the refresh). The refresh must not write the
// repository back: it fails, and its retry lists GitHub again.
func TestRefreshOlderThanARemovalCannotRestoreIt(t *testing.T) {
	for name, open := range map[string]func(testing.TB) Store{
		"sqlite":   func(t testing.TB) Store { return sqlitetest.Open(t) },
		"postgres": func(t testing.TB) Store { return postgrestest.Open(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			gh := githubtest.New(t)
			repo := gh.CreateRepo("octo-org", "sips", map[string]string{"README.md": "sips\n"})
			inst := repo.Installation
			st := open(t)
			a, err := New(Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, WebhookSecrets: []string{"s"}, APIURL: gh.URL, Store: st})
			if err != nil {
				t.Fatal(err)
			}
			active := func() int {
				rs, err := st.Repositories(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return len(rs)
			}
			if err := a.refreshInstallation(ctx, inst); err != nil || active() != 1 {
				t.Fatalf("first refresh: %v, %d active repositories", err, active())
			}

			// The refresh asks GitHub and is held there; GitHub's answer
			// still names the repository.
			held, release := gh.Hold(func(r *http.Request) bool { return r.URL.Path == "/installation/repositories" })
			done := make(chan error, 1)
			go func() { done <- a.refreshInstallation(ctx, inst) }()
			<-held
			removal := &github.InstallationRepositoriesEvent{Action: github.String("removed"),
				Installation:        &github.Installation{ID: github.Int64(inst)},
				RepositoriesRemoved: []*github.Repository{{ID: github.Int64(repo.ID), FullName: github.String(repo.FullName())}}}
			if err := a.installationRepositories(ctx, removal); err != nil {
				t.Fatal(err)
			}
			release()
			if err := <-done; !errors.Is(err, registry.ErrConflict) {
				t.Errorf("the refresh older than the removal: %v, want a conflict (retried)", err)
			}
			if n := active(); n != 0 {
				t.Fatalf("%d active repositories after the removal, want 0: the stale listing wrote one back", n)
			}

			// GitHub's state catches up; the retry lists it and agrees.
			gh.SetInstalled(repo, 0)
			if err := a.refreshInstallation(ctx, inst); err != nil || active() != 0 {
				t.Errorf("the retry: %v, %d active repositories, want 0", err, active())
			}
			// An "added" event whose answer predates a removal is refused
			// the same way.
			gh.SetInstalled(repo, inst)
			held, release = gh.Hold(func(r *http.Request) bool { return r.URL.Path == "/repos/octo-org/sips" })
			go func() {
				done <- a.addRepositories(ctx, inst, []*github.Repository{{ID: github.Int64(repo.ID), FullName: github.String(repo.FullName())}})
			}()
			<-held
			if err := st.DeactivateRepositories(ctx, inst, []int64{repo.ID}, a.now()); err != nil {
				t.Fatal(err)
			}
			release()
			if err := <-done; !errors.Is(err, registry.ErrConflict) || active() != 0 {
				t.Errorf("an addition older than a removal: %v, %d active, want a conflict and 0", err, active())
			}
		})
	}
}
