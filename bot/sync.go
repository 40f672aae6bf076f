package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/bot/internal/markdown"
	"github.com/sipregistry/sip/bot/policy"
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
	if e.GetRef() != "refs/heads/"+t.DefaultBranch || e.GetDeleted() {
		return nil
	}
	// What each open pull request would merge has changed: check them
	// again, each through the inbox (deduplicated by the new commit).
	if err := a.recheckOpenPulls(ctx, t, e.GetAfter()); err != nil {
		return err
	}
	if !a.follows(t) {
		return nil
	}
	return a.syncRegistry(ctx, t)
}

// maxRechecks bounds the open pull requests checked again when the
// default branch moves; the oldest beyond it wait for their next event.
const maxRechecks = 300

// recheckOpenPulls queues a new check of every open pull request into the
// default branch, newest first, at most maxRechecks. Each is one delivery
// whose id names the pull request's head and the branch's new commit, so
// a push delivered twice queues nothing twice, and work on one pull
// request stays serialised with its own events; the inbox's metrics show
// the queue. A pull request that touches no SIP or governance file costs
// two GitHub requests and no git.
func (a *App) recheckOpenPulls(ctx context.Context, t target, commit string) error {
	gh := a.gh.installation(t.Installation).client
	open, err := a.openPulls(ctx, gh, t)
	if err != nil {
		return err
	}
	n := 0
	for _, pr := range open {
		if pr.GetBase().GetRef() != t.DefaultBranch {
			continue
		}
		if n == maxRechecks {
			a.log.Warn("too many open pull requests to recheck at once; the rest wait for their next event", "repository", t.fullName(), "rechecked", n)
			break
		}
		n++
		other := t
		other.Number = pr.GetNumber()
		id := fmt.Sprintf("sip:recheck:%d:%d@%s:%s@%s", t.RepoID, other.Number, pr.GetHead().GetSHA(), t.DefaultBranch, commit)
		if err := a.enqueue(ctx, id, eventCheckPull, pullKey(t.RepoID, other.Number), other); err != nil {
			return err
		}
	}
	return nil
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
	gh := a.gh.installation(t.Installation).client
	// What reaches the default branch is verified, not trusted: each new
	// commit must have been approved under the policy of its parent. The
	// registry syncs the newest commit up to which every one was; the
	// first commit where one was not is reported and syncs nothing.
	state, err := a.store.SyncState(ctx)
	if err != nil {
		return err
	}
	if state.CommitSHA == "" {
		// The first sync trusts the branch as installed: there is no
		// verified commit to verify from.
		if err := a.store.PutVerification(ctx, &inbox.Verification{RepoID: t.RepoID, UpdatedAt: a.now()}); err != nil {
			return err
		}
	} else if state.CommitSHA != src.Commit {
		st, err := a.verifyMain(ctx, gh, t, state.CommitSHA, src.Commit)
		if err != nil {
			return err
		}
		if err := a.reportMain(ctx, gh, t, st, st.syncable); err != nil {
			return err
		}
		if st.syncable == state.CommitSHA {
			a.log.Warn("the default branch holds a commit the policy did not approve; the registry stays where it is",
				"repository", t.fullName(), "commit", st.refused.commit, "serving", state.CommitSHA)
			return nil
		}
		if st.syncable != src.Commit {
			files, err := gitrev.Commits(ctx, t.CloneURL, token, a.cfg.Dir, st.syncable)
			if err != nil {
				return fmt.Errorf("%s: %w", t, err)
			}
			src = registry.Source{Files: files[st.syncable], Commit: st.syncable, Dir: src.Dir,
				Name: "github " + t.fullName() + "@" + short(st.syncable)}
		}
	}
	// The registry applies the policy of the commit it syncs, as the
	// pull-request check applied it: rule severities, trusted issuers and
	// sections. A commit whose policy cannot be read is not synced.
	pol, err := a.policyAt(ctx, gh, t, src.Commit)
	var bad *policyError
	if errors.As(err, &bad) {
		err = fmt.Errorf("%s at %s cannot be used, so the registry cannot apply it: %w", policy.Path, short(src.Commit), bad)
		a.metrics.refused.Set(1)
		if rerr := a.reportRefusal(ctx, t, src.Commit, err, nil); rerr != nil {
			return rerr
		}
		return permanent(fmt.Errorf("%s: %w", t, err))
	}
	if err != nil {
		return err
	}
	src.Configure = pol.Apply
	rep, err := registry.Sync(ctx, a.store, src, a.now())
	var invalid *registry.ValidationError
	if errors.As(err, &invalid) || errors.Is(err, registry.ErrEmptySource) {
		// The default branch holds SIPs the registry refuses: another
		// attempt reads the same commit. Say so on GitHub, where the
		// people who can fix it look; the next push is synced.
		a.metrics.refused.Set(1)
		if rerr := a.reportRefusal(ctx, t, src.Commit, err, invalid); rerr != nil {
			return rerr
		}
		return permanent(fmt.Errorf("%s: %w", t, err))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	a.metrics.refused.Set(0)
	a.log.Info("registry synced", "repository", t.fullName(), "commit", rep.Commit, "up_to_date", rep.UpToDate,
		"added", len(rep.Added), "changed", len(rep.Changed), "deprecated", len(rep.Deprecated))
	return a.postCheck(ctx, gh, t, src.Commit, checkResult{name: SyncCheck, conclusion: "success", title: "Registry synced",
		summary: fmt.Sprintf("The registry serves this commit: %d added, %d changed, %d deprecated.", len(rep.Added), len(rep.Changed), len(rep.Deprecated))})
}

// reportRefusal posts a failing sync check on the refused commit, with an
// annotation on each problem, and comments on the pull requests that
// brought the commit in.
func (a *App) reportRefusal(ctx context.Context, t target, commit string, err error, invalid *registry.ValidationError) error {
	gh := a.gh.installation(t.Installation).client
	rep := &pullReport{}
	title := "The registry refused this commit"
	summary := fmt.Sprintf("The registry still serves the commit it synced before: `%s` at %s cannot be synced.\n\n", t.DefaultBranch, short(commit))
	if invalid != nil {
		rep.Problems = invalid.Problems
		errs, _ := registry.Count(invalid.Problems)
		title = fmt.Sprintf("The registry refused this commit: %s", markdown.Plural(errs, "error"))
		summary += rep.summary()
	} else {
		summary += err.Error() + "\n"
	}
	summary += "\nFix it with a pull request; the registry syncs the next push to `" + t.DefaultBranch + "`.\n"
	if err := a.postCheck(ctx, gh, t, commit, checkResult{name: SyncCheck, conclusion: "failure", title: title, summary: truncate(summary, maxMarkdown),
		annotations: rep.annotations()}); err != nil {
		return err
	}
	pulls, _, perr := gh.PullRequests.ListPullRequestsWithCommit(ctx, t.Owner, t.Name, commit, &github.ListOptions{PerPage: 10})
	if perr != nil {
		return fmt.Errorf("%s: pull requests of %s: %w", t, short(commit), perr)
	}
	marker := "<!-- sip:sync-refused:" + commit + " -->"
	body := marker + "\n" + fmt.Sprintf("⚠️ **The registry refused `%s` at %s**, after this pull request merged: %s. It still serves the commit before. "+
		"The **%s** check on that commit lists the problems; fix them with a new pull request.", t.DefaultBranch, short(commit), strings.ToLower(title[:1])+title[1:], SyncCheck)
	for _, pr := range pulls {
		if !pr.GetMerged() && pr.GetMergeCommitSHA() != commit {
			continue
		}
		said, err := a.hasComment(ctx, gh, t, pr.GetNumber(), marker)
		if err != nil {
			return err
		}
		if said {
			continue // a retry, or a redelivery
		}
		if _, _, err := gh.Issues.CreateComment(ctx, t.Owner, t.Name, pr.GetNumber(), &github.IssueComment{Body: github.String(body)}); err != nil {
			return fmt.Errorf("%s#%d: comment: %w", t.fullName(), pr.GetNumber(), err)
		}
	}
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
		// Read before asking GitHub: a removal processed meanwhile makes
		// the answer stale, and the write fails rather than undo it.
		epoch, err := a.store.RepositoryEpoch(ctx)
		if err != nil {
			return err
		}
		owner, name, _ := strings.Cut(r.GetFullName(), "/")
		full, resp, err := gh.Repositories.Get(ctx, owner, name)
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			continue // removed again since
		}
		if err != nil {
			return fmt.Errorf("%s: %w", r.GetFullName(), err)
		}
		if err := a.putRepository(ctx, installation, full, epoch); err != nil {
			return err
		}
	}
	return nil
}

func (a *App) putRepository(ctx context.Context, installation int64, r *github.Repository, epoch int64) error {
	repo := &inbox.Repository{ID: r.GetID(), InstallationID: installation, FullName: r.GetFullName(),
		DefaultBranch: r.GetDefaultBranch(), CloneURL: r.GetCloneURL(), UpdatedAt: a.now()}
	if err := a.store.PutRepository(ctx, repo, epoch); err != nil {
		return err
	}
	t := target{Installation: installation, RepoID: r.GetID(), Owner: r.GetOwner().GetLogin(), Name: r.GetName(),
		CloneURL: r.GetCloneURL(), DefaultBranch: r.GetDefaultBranch()}
	if a.follows(t) {
		return a.enqueue(ctx, fmt.Sprintf("sip:sync:%d:installed:%d", t.RepoID, a.now().Unix()), eventSync, fmt.Sprintf("repo:%d/push", t.RepoID), t)
	}
	return nil
}

// hasComment says whether a pull request or issue has a comment of a bot
// containing marker.
func (a *App) hasComment(ctx context.Context, gh *github.Client, t target, number int, marker string) (bool, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		cs, resp, err := gh.Issues.ListComments(ctx, t.Owner, t.Name, number, opts)
		if err != nil {
			return false, fmt.Errorf("%s#%d: listing comments: %w", t.fullName(), number, err)
		}
		for _, c := range cs {
			// Only a bot's (the App's) counts: anyone may write the marker.
			if c.GetUser().GetType() == "Bot" && strings.Contains(c.GetBody(), marker) {
				return true, nil
			}
		}
		if resp.NextPage == 0 {
			return false, nil
		}
		opts.Page = resp.NextPage
	}
}
