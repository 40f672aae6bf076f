package author

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/proposal"
)

// Open opens a pull request as the token's person: the change is
// committed on a new branch made from the current head of the
// repository's default branch, in the repository when the person can
// push to it, else in their fork (made when missing).
func (c *Client) Open(ctx context.Context, token string, ch proposal.Change) (proposal.Opened, error) {
	gh := c.as(token)
	up, _, err := gh.Repositories.Get(ctx, ch.Owner, ch.Repo)
	if err != nil {
		return proposal.Opened{}, describe(err, "reading "+ch.Owner+"/"+ch.Repo)
	}
	base := up.GetDefaultBranch()
	ref, _, err := gh.Git.GetRef(ctx, ch.Owner, ch.Repo, "heads/"+base)
	if err != nil {
		return proposal.Opened{}, describe(err, "reading the head of "+base)
	}
	head := ref.GetObject().GetSHA()
	owner, name := ch.Owner, ch.Repo
	if !up.GetPermissions()["push"] {
		fork, err := c.fork(ctx, gh, ch.Owner, ch.Repo)
		if err != nil {
			return proposal.Opened{}, err
		}
		owner, name = fork.GetOwner().GetLogin(), fork.GetName()
		// The new branch starts at upstream's head whatever the fork's
		// default branch holds; bringing that branch up to date too
		// leaves no stale fork behind. A fork whose default branch has
		// commits of its own keeps them (GitHub answers 409).
		if _, _, err := gh.Repositories.MergeUpstream(ctx, owner, name, &github.RepoMergeUpstreamRequest{Branch: github.String(base)}); err != nil &&
			!isStatus(err, http.StatusConflict) && !isStatus(err, http.StatusUnprocessableEntity) {
			return proposal.Opened{}, describe(err, "updating your fork's "+base+" from "+ch.Owner+"/"+ch.Repo)
		}
	}
	branch, err := c.newBranch(ctx, gh, owner, name, ch.Branch, head)
	if err != nil {
		return proposal.Opened{}, err
	}
	opts := &github.RepositoryContentFileOptions{Message: github.String(ch.Message), Content: ch.Content, Branch: github.String(branch)}
	if f, _, _, err := gh.Repositories.GetContents(ctx, owner, name, ch.Path, &github.RepositoryContentGetOptions{Ref: branch}); err == nil && f != nil {
		opts.SHA = github.String(f.GetSHA())
	} else if err != nil && !isStatus(err, http.StatusNotFound) {
		return proposal.Opened{}, describe(err, "reading "+ch.Path)
	}
	if _, _, err := gh.Repositories.CreateFile(ctx, owner, name, ch.Path, opts); err != nil {
		return proposal.Opened{}, describe(err, "committing "+ch.Path)
	}
	headRef := branch
	if owner != ch.Owner {
		headRef = owner + ":" + branch
	}
	pr, _, err := gh.PullRequests.Create(ctx, ch.Owner, ch.Repo, &github.NewPullRequest{Title: github.String(ch.Title),
		Head: github.String(headRef), Base: github.String(base), Body: github.String(ch.Body), Draft: github.Bool(ch.Draft)})
	if err != nil {
		return proposal.Opened{}, describe(err, "opening the pull request")
	}
	out := proposal.Opened{Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Branch: branch}
	if owner != ch.Owner {
		out.Fork = owner + "/" + name
	}
	return out, nil
}

// fork is the person's fork of owner/repo, made when missing (GitHub
// answers with the existing fork then). GitHub makes a fork in the
// background: it is waited for, for at most a minute.
func (c *Client) fork(ctx context.Context, gh *github.Client, owner, repo string) (*github.Repository, error) {
	fork, _, err := gh.Repositories.CreateFork(ctx, owner, repo, &github.RepositoryCreateForkOptions{DefaultBranchOnly: true})
	var accepted *github.AcceptedError
	if err != nil && !errors.As(err, &accepted) {
		if isStatus(err, http.StatusForbidden) || isStatus(err, http.StatusNotFound) || isStatus(err, http.StatusUnprocessableEntity) {
			return nil, fmt.Errorf("%w: %s", ErrForkRefused, message(err))
		}
		return nil, describe(err, "forking "+owner+"/"+repo)
	}
	deadline := time.Now().Add(time.Minute)
	for wait := 250 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		_, _, err := gh.Repositories.Get(ctx, fork.GetOwner().GetLogin(), fork.GetName())
		if err == nil {
			return fork, nil
		}
		if !isStatus(err, http.StatusNotFound) || time.Now().After(deadline) {
			return nil, describe(err, "waiting for your fork")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// newBranch makes a branch at head: name, or name-2, name-3, … when it is
// taken.
func (c *Client) newBranch(ctx context.Context, gh *github.Client, owner, repo, name, head string) (string, error) {
	for i := 1; i <= 50; i++ {
		branch := name
		if i > 1 {
			branch = fmt.Sprintf("%s-%d", name, i)
		}
		_, _, err := gh.Git.CreateRef(ctx, owner, repo, &github.Reference{Ref: github.String("refs/heads/" + branch), Object: &github.GitObject{SHA: github.String(head)}})
		if err == nil {
			return branch, nil
		}
		if !isStatus(err, http.StatusUnprocessableEntity) { // 422: "Reference already exists"
			return "", describe(err, "making the branch "+branch)
		}
	}
	return "", fmt.Errorf("every branch from %s to %s-50 exists in %s/%s: %w", name, name, owner, repo, registry.ErrConflict)
}

func isStatus(err error, status int) bool {
	var ge *github.ErrorResponse
	return errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == status
}

func message(err error) string {
	var ge *github.ErrorResponse
	if errors.As(err, &ge) {
		return ge.Message
	}
	return err.Error()
}

// Claimed lists the SIP numbers that open pull requests of owner/repo add
// (files dir/SIP-<N>.md they add), each with the earliest pull request
// that claims it: the rule the App applies, under which the earliest open
// pull request keeps a number.
func (c *Client) Claimed(ctx context.Context, token, owner, repo, dir string) (map[int]string, error) {
	gh := c.as(token)
	claimed := map[int]int{}
	opts := &github.PullRequestListOptions{State: "open", ListOptions: github.ListOptions{PerPage: 100}}
	for {
		pulls, resp, err := gh.PullRequests.List(ctx, owner, repo, opts)
		if err != nil {
			return nil, describe(err, "listing open pull requests")
		}
		for _, pr := range pulls {
			fo := &github.ListOptions{PerPage: 100}
			for {
				files, fresp, err := gh.PullRequests.ListFiles(ctx, owner, repo, pr.GetNumber(), fo)
				if err != nil {
					return nil, describe(err, fmt.Sprintf("listing the files of pull request #%d", pr.GetNumber()))
				}
				for _, f := range files {
					if f.GetStatus() != "added" && f.GetStatus() != "renamed" && f.GetStatus() != "copied" {
						continue
					}
					if n, ok := registry.NumberOf(dir, f.GetFilename()); ok {
						if prev, seen := claimed[n]; !seen || pr.GetNumber() < prev {
							claimed[n] = pr.GetNumber()
						}
					}
				}
				if fresp.NextPage == 0 {
					break
				}
				fo.Page = fresp.NextPage
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	out := make(map[int]string, len(claimed))
	for n, pr := range claimed {
		out[n] = fmt.Sprintf("pull request #%d", pr)
	}
	return out, nil
}

// Status reads a pull request's state, checks and reviews.
func (c *Client) Status(ctx context.Context, token, owner, repo string, number int) (proposal.Status, error) {
	gh := c.as(token)
	pr, _, err := gh.PullRequests.Get(ctx, owner, repo, number)
	if err != nil {
		return proposal.Status{}, describe(err, fmt.Sprintf("reading pull request #%d", number))
	}
	st := proposal.Status{Number: number, URL: pr.GetHTMLURL(), Title: pr.GetTitle(), Author: pr.GetUser().GetLogin(), State: pr.GetState(),
		Merged: pr.GetMerged(), Draft: pr.GetDraft(), HeadSHA: pr.GetHead().GetSHA()}
	runs, _, err := gh.Checks.ListCheckRunsForRef(ctx, owner, repo, st.HeadSHA, &github.ListCheckRunsOptions{ListOptions: github.ListOptions{PerPage: 100}})
	if err != nil {
		return proposal.Status{}, describe(err, "reading the checks")
	}
	for _, r := range runs.CheckRuns {
		st.Checks = append(st.Checks, proposal.Check{Name: r.GetName(), Status: r.GetStatus(), Conclusion: r.GetConclusion(), Title: r.GetOutput().GetTitle()})
	}
	reviews, _, err := gh.PullRequests.ListReviews(ctx, owner, repo, number, &github.ListOptions{PerPage: 100})
	if err != nil {
		return proposal.Status{}, describe(err, "reading the reviews")
	}
	latest := map[string]int{}
	for _, r := range reviews {
		if r.GetState() == "COMMENTED" || r.GetState() == "PENDING" {
			continue
		}
		u := r.GetUser().GetLogin()
		if i, ok := latest[u]; ok {
			st.Reviews[i].State = r.GetState()
			continue
		}
		latest[u] = len(st.Reviews)
		st.Reviews = append(st.Reviews, proposal.Review{User: u, State: r.GetState()})
	}
	for _, r := range st.Reviews {
		switch r.State {
		case "APPROVED":
			st.Approved = true
		case "CHANGES_REQUESTED":
			st.Approved = false
			return st, nil
		}
	}
	return st, nil
}
