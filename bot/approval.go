package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/registry"
)

// approve applies the repository's approval policy (read from the default
// branch, never from the pull request) and posts the "SIP approval" check
// run: in progress while approvals are missing, failure when a maintainer
// asked for changes or the policy file is invalid, success once approved.
func (a *App) approve(ctx context.Context, gh *github.Client, t target, pr *github.PullRequest, scope Scope) (*Decision, error) {
	head := pr.GetHead().GetSHA()
	policy, err := a.policy(ctx, gh, t)
	var bad *policyError
	if errors.As(err, &bad) {
		d := &Decision{State: Blocked, Required: 1}
		return d, a.postCheck(ctx, gh, t, head, checkResult{name: ApprovalCheck, conclusion: "failure",
			title: "Invalid approval policy", summary: fmt.Sprintf("`%s` on `%s` cannot be read: %s", PolicyPath, t.DefaultBranch, bad.Error())})
	}
	if err != nil {
		return nil, err
	}
	reviews, err := a.reviews(ctx, gh, t)
	if err != nil {
		return nil, err
	}
	j := &githubJudge{ctx: ctx, gh: gh, t: t, head: head, dir: a.cfg.Dir, maintainer: map[string]bool{}, changed: map[string]bool{}}
	d, err := Decide(policy, pr.GetUser().GetLogin(), reviews, j, scope)
	if err != nil {
		return nil, err
	}
	c := checkResult{name: ApprovalCheck, title: d.title(), summary: d.explain() + policySummary(policy, scope)}
	switch d.State {
	case Approved:
		c.conclusion = "success"
	case Blocked:
		c.conclusion = "failure"
	default:
		c.status = "in_progress"
	}
	return &d, a.postCheck(ctx, gh, t, head, c)
}

func policySummary(p *Policy, scope Scope) string {
	var rules []string
	if scope.SIPs {
		rules = append(rules, fmt.Sprintf("a change to SIPs needs %d approval(s) from %s", p.RequiredApprovals,
			names(p.Maintainers, "the repository's admins and maintainers")))
	}
	if scope.Governance {
		rules = append(rules, fmt.Sprintf("a change to a governance file (%s) needs an approval from %s",
			"`"+strings.Join(GovernanceFiles, "`, `")+"`", names(p.Admins, "the repository's admins")))
	}
	return fmt.Sprintf("\nPolicy (`%s` on the default branch): %s; the author's own approval does not count; "+
		"approvals given before the latest change to a SIP or governance file do not count; a request for changes by a reviewer whose approval would count blocks.\n",
		PolicyPath, strings.Join(rules, "; "))
}

// names lists a group's members for people, or says who stands in for an
// empty group.
func names(g Group, fallback string) string {
	if g.empty() {
		return fallback
	}
	var out []string
	for _, u := range g.Users {
		out = append(out, "@"+u)
	}
	for _, t := range g.Teams {
		out = append(out, "@"+t)
	}
	return strings.Join(out, ", ")
}

// policyError is an approval policy file that cannot be read.
type policyError struct{ err error }

func (e *policyError) Error() string { return e.err.Error() }

// policy reads .github/sip.yml from the default branch (defaults when
// there is none).
func (a *App) policy(ctx context.Context, gh *github.Client, t target) (*Policy, error) {
	file, _, resp, err := gh.Repositories.GetContents(ctx, t.Owner, t.Name, PolicyPath, &github.RepositoryContentGetOptions{Ref: t.DefaultBranch})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return ParsePolicy(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", t, PolicyPath, err)
	}
	content, err := file.GetContent()
	if err != nil {
		return nil, &policyError{err}
	}
	p, err := ParsePolicy([]byte(content))
	if err != nil {
		return nil, &policyError{err}
	}
	return p, nil
}

// reviews lists a pull request's reviews (lower-case states, as in
// webhooks).
func (a *App) reviews(ctx context.Context, gh *github.Client, t target) ([]Review, error) {
	var out []Review
	opts := &github.ListOptions{PerPage: 100}
	for {
		rs, resp, err := gh.PullRequests.ListReviews(ctx, t.Owner, t.Name, t.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: listing reviews: %w", t, err)
		}
		for _, r := range rs {
			out = append(out, Review{User: r.GetUser().GetLogin(), Bot: r.GetUser().GetType() == "Bot",
				State: strings.ToLower(r.GetState()), CommitID: r.GetCommitID(), SubmittedAt: r.GetSubmittedAt().Time})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// githubJudge answers the policy's questions from GitHub, remembering the
// answers for one decision.
type githubJudge struct {
	ctx        context.Context
	gh         *github.Client
	t          target
	head, dir  string
	maintainer map[string]bool
	changed    map[string]bool
}

func (j *githubJudge) IsMaintainer(user string, p *Policy) (bool, error) {
	key := strings.ToLower(user)
	if v, ok := j.maintainer[key]; ok {
		return v, nil
	}
	v, err := j.isMaintainer(user, p)
	if err == nil {
		j.maintainer[key] = v
	}
	return v, err
}

func (j *githubJudge) IsAdmin(user string, p *Policy) (bool, error) {
	key := "admin:" + strings.ToLower(user)
	if v, ok := j.maintainer[key]; ok {
		return v, nil
	}
	v, err := j.inGroup(user, p.Admins)
	if err == nil && !v && p.Admins.empty() {
		v, err = j.hasRole(user, "admin")
	}
	if err == nil {
		j.maintainer[key] = v
	}
	return v, err
}

func (j *githubJudge) isMaintainer(user string, p *Policy) (bool, error) {
	in, err := j.inGroup(user, p.Maintainers)
	if err != nil || in || !p.Maintainers.empty() {
		return in, err
	}
	// No maintainers listed: the repository's admins and maintainers.
	return j.hasRole(user, "admin", "maintain")
}

// inGroup says whether user is one of g's users or an active member of
// one of its teams.
func (j *githubJudge) inGroup(user string, g Group) (bool, error) {
	for _, u := range g.Users {
		if strings.EqualFold(u, user) {
			return true, nil
		}
	}
	for _, team := range g.Teams {
		org, slug, _ := strings.Cut(team, "/")
		m, resp, err := j.gh.Teams.GetTeamMembershipBySlug(j.ctx, org, slug, user)
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("team %s: %w", team, err)
		}
		if m.GetState() == "active" {
			return true, nil
		}
	}
	return false, nil
}

// hasRole says whether user has one of roles on the repository.
func (j *githubJudge) hasRole(user string, roles ...string) (bool, error) {
	pl, resp, err := j.gh.Repositories.GetPermissionLevel(j.ctx, j.t.Owner, j.t.Name, user)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("permission of %s: %w", user, err)
	}
	role := pl.GetUser().GetRoleName() // v62 collapses maintain into "write" in Permission
	if role == "" && pl.GetPermission() == "admin" {
		role = "admin"
	}
	return slices.Contains(roles, role), nil
}

// ReviewedChangedSince compares commit with the head: an approval of an
// older commit still counts when no SIP or governance file changed since.
func (j *githubJudge) ReviewedChangedSince(commit string) (bool, error) {
	if commit == j.head {
		return false, nil
	}
	if v, ok := j.changed[commit]; ok {
		return v, nil
	}
	cmp, resp, err := j.gh.Repositories.CompareCommits(j.ctx, j.t.Owner, j.t.Name, commit, j.head, &github.ListOptions{PerPage: 100})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		j.changed[commit] = true // the reviewed commit is gone (a force push)
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("comparing %s with the head: %w", short(commit), err)
	}
	changed := cmp.GetStatus() == "diverged" || cmp.GetStatus() == "behind"
	for _, f := range cmp.Files {
		for _, name := range []string{f.GetFilename(), f.GetPreviousFilename()} {
			if name != "" && (registry.Reads(j.dir, name) || IsGovernance(name)) {
				changed = true
			}
		}
	}
	// A comparison lists at most 300 files: beyond that, assume a change.
	if len(cmp.Files) >= 300 {
		changed = true
	}
	j.changed[commit] = changed
	return changed, nil
}
