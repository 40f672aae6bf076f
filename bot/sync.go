package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/gitrev"
)

// push syncs the registry when the default branch of its repository
// moves; other pushes change nothing.
func (a *App) push(ctx context.Context, e *github.PushEvent) error {
	repo := e.GetRepo()
	if e.GetInstallation().GetID() == 0 || repo.GetOwner().GetLogin() == "" && repo.GetOwner().GetName() == "" {
		return permanent(errors.New("the push names no installation or repository"))
	}
	owner := repo.GetOwner().GetLogin()
	if owner == "" {
		owner = repo.GetOwner().GetName() // push payloads carry the owner's name
	}
	t := target{Installation: e.GetInstallation().GetID(), RepoID: repo.GetID(), Owner: owner, Name: repo.GetName(),
		CloneURL: repo.GetCloneURL(), DefaultBranch: repo.GetDefaultBranch()}
	if e.GetRef() != "refs/heads/"+t.DefaultBranch || e.GetDeleted() || !a.follows(t) {
		return nil
	}
	return a.syncRegistry(ctx, t)
}

// follows says whether the registry follows a repository.
func (a *App) follows(t target) bool {
	return a.cfg.Repository != "" && strings.EqualFold(t.fullName(), a.cfg.Repository)
}

// syncRegistry syncs the registry to the current head of the default
// branch (not to the commit an event named: a late event cannot roll the
// registry back). The registry's sync is atomic and skips a commit it
// already holds, so a commit is applied at most once.
func (a *App) syncRegistry(ctx context.Context, t target) error {
	if t.CloneURL == "" || t.DefaultBranch == "" {
		r, _, err := a.gh.installation(t.Installation).client.Repositories.Get(ctx, t.Owner, t.Name)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		t.CloneURL, t.DefaultBranch = r.GetCloneURL(), r.GetDefaultBranch()
	}
	token, err := a.gh.gitToken(ctx, t.Installation)
	if err != nil {
		return fmt.Errorf("%s: installation token: %w", t, err)
	}
	src, err := gitrev.Fetch(ctx, gitrev.FetchOptions{Repo: t.CloneURL, Ref: t.DefaultBranch, Dir: a.cfg.Dir, Token: token})
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	src.Name = "github " + t.fullName() + "@" + short(src.Commit)
	rep, err := registry.Sync(ctx, a.store, src, a.now())
	var invalid *registry.ValidationError
	if errors.As(err, &invalid) || errors.Is(err, registry.ErrEmptySource) {
		// The default branch holds SIPs the registry refuses: another
		// attempt reads the same commit. The next push is synced.
		return permanent(fmt.Errorf("%s: %w", t, err))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	a.log.Info("registry synced", "repository", t.fullName(), "commit", rep.Commit, "up_to_date", rep.UpToDate,
		"added", len(rep.Added), "changed", len(rep.Changed), "deprecated", len(rep.Deprecated))
	return nil
}

// installationChanged keeps the list of repositories.
func (a *App) installationChanged(ctx context.Context, e *github.InstallationEvent) error {
	id := e.GetInstallation().GetID()
	switch e.GetAction() {
	case "deleted", "suspend":
		a.gh.forget(id)
		return a.store.DeactivateRepositories(ctx, id, nil, a.now())
	}
	if e.GetAction() == "new_permissions_accepted" {
		a.gh.forget(id) // the cached token has the old permissions
	}
	return a.addRepositories(ctx, id, e.Repositories)
}

func (a *App) installationRepositories(ctx context.Context, e *github.InstallationRepositoriesEvent) error {
	id := e.GetInstallation().GetID()
	if len(e.RepositoriesRemoved) > 0 {
		var ids []int64
		for _, r := range e.RepositoriesRemoved {
			ids = append(ids, r.GetID())
		}
		if err := a.store.DeactivateRepositories(ctx, id, ids, a.now()); err != nil {
			return err
		}
	}
	return a.addRepositories(ctx, id, e.RepositoriesAdded)
}

// addRepositories records repositories; installation payloads name them
// without their default branch, so each is read from the API, and the
// registry's own repository is synced.
func (a *App) addRepositories(ctx context.Context, installation int64, repos []*github.Repository) error {
	gh := a.gh.installation(installation).client
	for _, r := range repos {
		owner, name, _ := strings.Cut(r.GetFullName(), "/")
		full, resp, err := gh.Repositories.Get(ctx, owner, name)
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			continue // removed again since
		}
		if err != nil {
			return fmt.Errorf("%s: %w", r.GetFullName(), err)
		}
		if err := a.putRepository(ctx, installation, full); err != nil {
			return err
		}
	}
	return nil
}

func (a *App) putRepository(ctx context.Context, installation int64, r *github.Repository) error {
	repo := &registry.Repository{ID: r.GetID(), InstallationID: installation, FullName: r.GetFullName(),
		DefaultBranch: r.GetDefaultBranch(), CloneURL: r.GetCloneURL(), UpdatedAt: a.now()}
	if err := a.store.PutRepository(ctx, repo); err != nil {
		return err
	}
	t := target{Installation: installation, RepoID: r.GetID(), Owner: r.GetOwner().GetLogin(), Name: r.GetName(),
		CloneURL: r.GetCloneURL(), DefaultBranch: r.GetDefaultBranch()}
	if a.follows(t) {
		return a.enqueue(ctx, fmt.Sprintf("sip:sync:%d:installed:%d", t.RepoID, a.now().Unix()), eventSync, fmt.Sprintf("repo:%d/push", t.RepoID), t)
	}
	return nil
}
