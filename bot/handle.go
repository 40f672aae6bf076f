package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-github/v62/github"
	"github.com/sipregistry/sip/bot/inbox"
)

// Events the App queues for itself (their delivery ids start "sip:").
const (
	eventCheckPull = "sip.check_pull" // check a pull request again
	eventSync      = "sip.sync"       // sync the registry to the default branch
	eventRefresh   = "sip.refresh_installation"
)

// target is a repository, and a pull request in it when Number > 0.
type target struct {
	Installation  int64  `json:"installation"`
	RepoID        int64  `json:"repo_id"`
	Owner         string `json:"owner"`
	Name          string `json:"name"`
	CloneURL      string `json:"clone_url"`
	DefaultBranch string `json:"default_branch"`
	Number        int    `json:"number,omitempty"`
	// Force posts a new check run even when the result has not changed
	// (someone asked for a re-run).
	Force bool `json:"force,omitempty"`
}

func (t target) fullName() string { return t.Owner + "/" + t.Name }

func (t target) String() string {
	if t.Number > 0 {
		return fmt.Sprintf("%s#%d", t.fullName(), t.Number)
	}
	return t.fullName()
}

func targetOf(inst *github.Installation, repo *github.Repository) (target, error) {
	if inst == nil || repo == nil || inst.GetID() == 0 || repo.GetOwner().GetLogin() == "" || repo.GetName() == "" {
		return target{}, permanent(fmt.Errorf("the payload names no installation or repository"))
	}
	return target{Installation: inst.GetID(), RepoID: repo.GetID(), Owner: repo.GetOwner().GetLogin(), Name: repo.GetName(),
		CloneURL: repo.GetCloneURL(), DefaultBranch: repo.GetDefaultBranch()}, nil
}

// handle does the work of one delivery.
func (a *App) handle(ctx context.Context, d *inbox.Delivery) error {
	if strings.HasPrefix(d.Event, "sip.") {
		var t target
		if err := json.Unmarshal(d.Payload, &t); err != nil {
			return permanent(fmt.Errorf("%s payload: %w", d.Event, err))
		}
		switch d.Event {
		case eventCheckPull:
			return a.checkPull(ctx, t)
		case eventSync:
			return a.syncRegistry(ctx, t)
		case eventRefresh:
			return a.refreshInstallation(ctx, t.Installation)
		}
		return permanent(fmt.Errorf("unknown internal event %q", d.Event))
	}
	ev, err := github.ParseWebHook(d.Event, d.Payload)
	if err != nil {
		return permanent(fmt.Errorf("payload: %w", err))
	}
	switch e := ev.(type) {
	case *github.PullRequestEvent:
		t, err := targetOf(e.Installation, e.Repo)
		if err != nil {
			return err
		}
		t.Number = e.GetNumber()
		if t.Number == 0 {
			t.Number = e.GetPullRequest().GetNumber()
		}
		if e.GetAction() == "closed" {
			return a.pullClosed(ctx, t)
		}
		return a.checkPull(ctx, t)
	case *github.PullRequestReviewEvent:
		t, err := targetOf(e.Installation, e.Repo)
		if err != nil {
			return err
		}
		if e.GetSender().GetType() == "Bot" && strings.HasSuffix(e.GetSender().GetLogin(), "[bot]") && e.GetReview().GetState() == "commented" {
			return nil // a bot's comment (ours, say) changes no approval
		}
		t.Number = e.GetPullRequest().GetNumber()
		return a.checkPull(ctx, t)
	case *github.CheckRunEvent:
		if e.GetCheckRun().GetApp().GetID() != 0 && e.GetCheckRun().GetApp().GetID() != a.cfg.AppID {
			return nil // another App's check
		}
		t, err := targetOf(e.Installation, e.Repo)
		if err != nil {
			return err
		}
		return a.rerun(ctx, t, e.GetCheckRun().GetHeadSHA(), e.GetCheckRun().PullRequests)
	case *github.CheckSuiteEvent:
		t, err := targetOf(e.Installation, e.Repo)
		if err != nil {
			return err
		}
		return a.rerun(ctx, t, e.GetCheckSuite().GetHeadSHA(), e.GetCheckSuite().PullRequests)
	case *github.PushEvent:
		return a.push(ctx, e)
	case *github.InstallationEvent:
		return a.installationChanged(ctx, e)
	case *github.InstallationRepositoriesEvent:
		return a.installationRepositories(ctx, e)
	case *github.IssueCommentEvent:
		return a.comment(ctx, e)
	case *github.MergeGroupEvent:
		return a.mergeGroup(ctx, e)
	}
	return nil
}

// rerun checks again the pull requests of a head commit whose check
// someone asked to re-run. For a pull request from a fork GitHub lists no
// pull requests, so they are found among the open ones by head SHA.
func (a *App) rerun(ctx context.Context, t target, head string, prs []*github.PullRequest) error {
	gh := a.gh.installation(t.Installation).client
	var numbers []int
	for _, pr := range prs {
		if pr.GetBase().GetRepo().GetID() == 0 || pr.GetBase().GetRepo().GetID() == t.RepoID {
			numbers = append(numbers, pr.GetNumber())
		}
	}
	if len(numbers) == 0 {
		open, err := a.openPulls(ctx, gh, t)
		if err != nil {
			return err
		}
		for _, pr := range open {
			if pr.GetHead().GetSHA() == head {
				numbers = append(numbers, pr.GetNumber())
			}
		}
	}
	for _, n := range numbers {
		t := t
		t.Number, t.Force = n, true
		if err := a.checkPull(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// enqueue queues work for the App itself, durably, deduplicated by id.
func (a *App) enqueue(ctx context.Context, id, event, key string, t target) error {
	payload, err := json.Marshal(t)
	if err != nil {
		return err
	}
	_, _, err = a.store.EnqueueDelivery(ctx, &inbox.Delivery{ID: id, Event: event, Key: key, Payload: payload, ReceivedAt: a.now().UTC()})
	if err == nil {
		a.notify()
	}
	return err
}
