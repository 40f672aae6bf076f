package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry"
)

// How far back reconciliation looks for failed deliveries (GitHub keeps
// them three days) and how long done deliveries stay in the inbox.
const (
	redeliveryWindow = 72 * time.Hour
	keepDone         = 7 * 24 * time.Hour
)

func (a *App) reconcileLoop(ctx context.Context) {
	for {
		if err := a.reconcileFn(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("reconciliation incomplete", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(a.cfg.ReconcileEvery):
		}
	}
}

// Reconcile repairs what lost events left behind: it asks GitHub to
// redeliver deliveries that never reached the App, refreshes the list of
// installed repositories, queues a sync when the registry's repository
// moved past the registry, and queues a check of open pull requests that
// have none on their head. It runs at start and periodically.
func (a *App) Reconcile(ctx context.Context) error {
	errs := []error{a.redeliverFailed(ctx), a.refreshRepositories(ctx)}
	repos, err := a.store.Repositories(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, r := range repos {
		errs = append(errs, a.reconcileRepository(ctx, r))
	}
	if _, err := a.store.PruneDeliveries(ctx, a.now().Add(-keepDone)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// redeliverFailed asks GitHub to redeliver each recent delivery whose
// every attempt failed and that the inbox does not hold.
func (a *App) redeliverFailed(ctx context.Context) error {
	type latest struct {
		id int64
		ok bool
	}
	byGUID := map[string]*latest{}
	var order []string
	opts := &github.ListCursorOptions{PerPage: 100}
	since := a.now().Add(-redeliveryWindow)
	for page := 0; page < 20; page++ {
		ds, resp, err := a.gh.app.Apps.ListHookDeliveries(ctx, opts)
		if err != nil {
			return fmt.Errorf("listing deliveries: %w", err)
		}
		old := false
		for _, d := range ds {
			if d.GetDeliveredAt().Before(since) {
				old = true
				continue
			}
			l, ok := byGUID[d.GetGUID()]
			if !ok {
				l = &latest{id: d.GetID()}
				byGUID[d.GetGUID()] = l
				order = append(order, d.GetGUID())
			}
			if code := d.GetStatusCode(); code >= 200 && code < 300 {
				l.ok = true
			}
		}
		if old || resp.Cursor == "" || len(ds) == 0 {
			break
		}
		opts.Cursor = resp.Cursor
	}
	var errs []error
	for _, guid := range order {
		l := byGUID[guid]
		if l.ok {
			continue
		}
		if _, err := a.store.Delivery(ctx, guid); err == nil {
			continue // it reached us after all
		} else if !errors.Is(err, registry.ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		_, _, err := a.gh.app.Apps.RedeliverHookDelivery(ctx, l.id)
		var accepted *github.AcceptedError
		if err != nil && !errors.As(err, &accepted) {
			errs = append(errs, fmt.Errorf("redelivering %s: %w", guid, err))
			continue
		}
		a.log.Info("asked GitHub to redeliver a failed delivery", "delivery", guid)
	}
	return errors.Join(errs...)
}

// refreshRepositories queues a refresh of each installation's
// repositories (through the inbox, under the installation's key, so it
// never races an installation event), and deactivates the repositories of
// installations that are gone.
func (a *App) refreshRepositories(ctx context.Context) error {
	known, err := a.store.Repositories(ctx)
	if err != nil {
		return err
	}
	installed := map[int64]bool{}
	var errs []error
	opts := &github.ListOptions{PerPage: 100}
	for {
		insts, resp, err := a.gh.app.Apps.ListInstallations(ctx, opts)
		if err != nil {
			return fmt.Errorf("listing installations: %w", err)
		}
		for _, in := range insts {
			installed[in.GetID()] = true
			if in.SuspendedAt != nil {
				continue
			}
			id := fmt.Sprintf("sip:refresh:%d:%d", in.GetID(), a.now().Unix()/60)
			if err := a.enqueue(ctx, id, eventRefresh, fmt.Sprintf("installation:%d", in.GetID()), target{Installation: in.GetID()}); err != nil {
				errs = append(errs, err)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	for _, r := range known {
		if !installed[r.InstallationID] {
			if err := a.store.DeactivateRepositories(ctx, r.InstallationID, nil, a.now()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// refreshInstallation records an installation's repositories as GitHub
// lists them now, and deactivates the ones it no longer lists.
//
// A removal processed while it asks GitHub (another replica's, or one
// whose delivery overtook it) wins: the listing is written under the
// repository epoch read before asking, so a repository the listing
// still names cannot come back; the refresh fails and is retried with a
// new listing. The epoch is read first, before asking GitHub.
func (a *App) refreshInstallation(ctx context.Context, installation int64) error {
	epoch, err := a.store.RepositoryEpoch(ctx)
	if err != nil {
		return err
	}
	seen := map[int64]bool{}
	if err := a.installationRepos(ctx, installation, epoch, seen); err != nil {
		return err
	}
	known, err := a.store.Repositories(ctx)
	if err != nil {
		return err
	}
	var gone []int64
	var errs []error
	for _, r := range known {
		switch {
		case r.InstallationID != installation:
		case !seen[r.ID]:
			gone = append(gone, r.ID)
		default:
			// A repository seen for the first time needs its sync and its
			// pull requests' checks too (queued, deduplicated by id).
			errs = append(errs, a.reconcileRepository(ctx, r))
		}
	}
	if len(gone) > 0 {
		errs = append(errs, a.store.DeactivateRepositories(ctx, installation, gone, a.now()))
	}
	return errors.Join(errs...)
}

func (a *App) installationRepos(ctx context.Context, id, epoch int64, seen map[int64]bool) error {
	gh := a.gh.installation(id).client
	opts := &github.ListOptions{PerPage: 100}
	for {
		list, resp, err := gh.Apps.ListRepos(ctx, opts)
		if err != nil {
			return fmt.Errorf("installation %d: listing repositories: %w", id, err)
		}
		for _, r := range list.Repositories {
			seen[r.GetID()] = true
			repo := &inbox.Repository{ID: r.GetID(), InstallationID: id, FullName: r.GetFullName(),
				DefaultBranch: r.GetDefaultBranch(), CloneURL: r.GetCloneURL(), UpdatedAt: a.now()}
			if err := a.store.PutRepository(ctx, repo, epoch); errors.Is(err, registry.ErrConflict) {
				return fmt.Errorf("installation %d: a removal was processed while GitHub was asked; listing again: %w", id, err)
			} else if err != nil {
				return err
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// reconcileRepository queues a sync when the registry's repository moved
// past the registry, and a check of each open pull request that has none.
func (a *App) reconcileRepository(ctx context.Context, r *inbox.Repository) error {
	owner, name, _ := strings.Cut(r.FullName, "/")
	t := target{Installation: r.InstallationID, RepoID: r.ID, Owner: owner, Name: name, CloneURL: r.CloneURL, DefaultBranch: r.DefaultBranch}
	gh := a.gh.installation(r.InstallationID).client
	if a.follows(t) && t.DefaultBranch != "" {
		b, resp, err := gh.Repositories.GetBranch(ctx, owner, name, t.DefaultBranch, 1)
		if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
			return fmt.Errorf("%s: %w", t, err)
		}
		state, err := a.store.SyncState(ctx)
		if err != nil {
			return err
		}
		if head := b.GetCommit().GetSHA(); head != "" && head != state.CommitSHA {
			if err := a.enqueue(ctx, fmt.Sprintf("sip:sync:%d:%s", r.ID, head), eventSync, fmt.Sprintf("repo:%d/push", r.ID), t); err != nil {
				return err
			}
		}
	}
	open, err := a.openPulls(ctx, gh, t)
	if err != nil {
		return err
	}
	for _, pr := range open {
		runs, _, err := gh.Checks.ListCheckRunsForRef(ctx, owner, name, pr.GetHead().GetSHA(), &github.ListCheckRunsOptions{
			CheckName: github.String(ValidationCheck), AppID: github.Int64(a.cfg.AppID)})
		if err != nil {
			return fmt.Errorf("%s#%d: listing check runs: %w", t, pr.GetNumber(), err)
		}
		if runs.GetTotal() > 0 {
			continue
		}
		p := t
		p.Number = pr.GetNumber()
		id := fmt.Sprintf("sip:reconcile:%d:%d@%s", r.ID, p.Number, pr.GetHead().GetSHA())
		if err := a.enqueue(ctx, id, eventCheckPull, pullKey(r.ID, p.Number), p); err != nil {
			return err
		}
	}
	return nil
}
