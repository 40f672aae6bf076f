package bot

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
)

// approve applies the repository's approval policy (the policy in force:
// never the pull request's own) to what the pull request changes and
// posts the "SIP approval" check run: in progress while approvals are
// missing, failure when a reviewer who may approve asked for changes, a
// rule no approval satisfies is unmet, or the policy file is invalid,
// success once every rule that applies is met or an admin's override at
// this head is on record.
func (a *App) approve(ctx context.Context, gh *github.Client, t target, pr *github.PullRequest, change policy.Change,
	p *policy.Policy, err error) (*policy.Decision, error) {
	head := pr.GetHead().GetSHA()
	invalid := func(err error) (*policy.Decision, error) {
		d := &policy.Decision{State: policy.Blocked}
		return d, a.postCheck(ctx, gh, t, head, checkResult{name: ApprovalCheck, conclusion: "failure",
			title: "Invalid approval policy", summary: fmt.Sprintf("`%s` on `%s` cannot be used: %s", policy.Path, t.DefaultBranch, err)})
	}
	var bad *policyError
	if errors.As(err, &bad) {
		return invalid(bad)
	}
	if err != nil {
		return nil, err
	}
	if missing, err := verifyPeople(ctx, gh, p, false); err != nil || missing != nil {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		return invalid(missing)
	}
	d, err := a.decide(ctx, gh, t, pr, change, p, pr.GetBase().GetRef(), time.Time{})
	if errors.As(err, &bad) {
		return invalid(bad)
	}
	if err != nil {
		return nil, err
	}
	c := checkResult{name: ApprovalCheck, title: d.Title(), summary: missingFirst(d) + d.Explain() + p.Summary()}
	switch d.State {
	case policy.Approved:
		c.conclusion = "success"
	case policy.Blocked:
		c.conclusion = "failure"
	default:
		c.status = "in_progress"
	}
	if d.State != policy.Approved {
		// An override on record, given at this head, lets it through.
		os, err := a.overridesOf(ctx, t, head)
		if err != nil {
			return nil, err
		}
		if len(os) > 0 {
			o := os[0]
			c.status, c.conclusion = "", "success"
			c.title = truncate(fmt.Sprintf("Overridden by @%s: %s", o.By, strings.Join(strings.Fields(o.Reason), " ")), 200)
			c.summary = fmt.Sprintf("**Overridden** by @%s at %s, because: %s\n\nWithout the override:\n\n%s", o.By,
				o.At.Format("2006-01-02 15:04 UTC"), quoteLine(o.Reason), c.summary)
		}
	}
	return &d, a.postCheck(ctx, gh, t, head, c)
}

// decide applies the policy to a pull request: what its change needs and
// what its author needs (an agent's sponsor), its reviews (submitted up
// to until, when set; agents' approvals marked), and the rules no
// approval satisfies (an agent's disclosure, first-time contributors'
// open pull requests).
func (a *App) decide(ctx context.Context, gh *github.Client, t target, pr *github.PullRequest, change policy.Change, p *policy.Policy,
	base string, until time.Time) (policy.Decision, error) {
	reviews, err := a.reviews(ctx, gh, t)
	if err != nil {
		return policy.Decision{}, err
	}
	for i := range reviews {
		reviews[i].Agent = p.IsAgent(reviews[i].User)
	}
	if !until.IsZero() {
		reviews = slices.DeleteFunc(reviews, func(r policy.Review) bool { return r.SubmittedAt.After(until) })
	}
	head, author := pr.GetHead().GetSHA(), pr.GetUser().GetLogin()
	j := &githubJudge{ctx: ctx, gh: gh, t: t, head: head, base: base, dir: a.cfg.Dir,
		updates: p.IgnoreUpdateMerges, member: map[string]bool{}, changed: map[string]bool{}}
	reqs := p.RequirementsFor(change, author)
	d, err := policy.Decide(reqs, author, reviews, j)
	if err != nil {
		return d, err
	}
	if p.IsAgent(author) {
		c, _, err := gh.Repositories.GetCommit(ctx, t.Owner, t.Name, head, &github.ListOptions{PerPage: 1})
		if err != nil {
			return d, fmt.Errorf("%s: reading commit %s: %w", t, short(head), err)
		}
		if !policy.Discloses(p.Disclosure(), pr.GetBody(), c.GetCommit().GetMessage()) {
			d.Block(fmt.Sprintf("@%s is an agent: its pull request needs a `%s: <agent and model>` line in the description or the head commit's message (the author adds it)",
				author, p.Disclosure()))
		}
	}
	if n := p.FirstTimeOpenPulls; n > 0 && firstTimer(pr.GetAuthorAssociation()) && until.IsZero() {
		open, err := a.openPulls(ctx, gh, t)
		if err != nil {
			return d, err
		}
		earlier := 0
		for _, o := range open {
			if strings.EqualFold(o.GetUser().GetLogin(), author) && o.GetNumber() <= pr.GetNumber() {
				earlier++
			}
		}
		if earlier > n {
			d.Block(fmt.Sprintf("@%s is a first-time contributor with %d open pull requests, and may have %d open at once: this one waits until earlier ones close (a maintainer may override)",
				author, earlier, n))
		}
	}
	return d, nil
}

// firstTimer says whether an author association is a first-time
// contributor's.
func firstTimer(association string) bool {
	switch association {
	case "FIRST_TIMER", "FIRST_TIME_CONTRIBUTOR", "NONE":
		return true
	}
	return false
}

// policyError is an approval policy that cannot be used: a file that
// does not parse, or a team it names that does not exist.
type policyError struct{ err error }

func (e *policyError) Error() string { return e.err.Error() }

// policyAt reads .github/sip.yml at a ref (defaults when there is none).
func (a *App) policyAt(ctx context.Context, gh *github.Client, t target, ref string) (*policy.Policy, error) {
	file, _, resp, err := gh.Repositories.GetContents(ctx, t.Owner, t.Name, policy.Path, &github.RepositoryContentGetOptions{Ref: ref})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return policy.Parse(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s: %w", t, policy.Path, err)
	}
	content, err := file.GetContent()
	if err != nil {
		return nil, &policyError{err}
	}
	p, err := policy.Parse([]byte(content))
	if err != nil {
		return nil, &policyError{err}
	}
	return p, nil
}

// reviews lists a pull request's reviews (lower-case states, as in
// webhooks).
func (a *App) reviews(ctx context.Context, gh *github.Client, t target) ([]policy.Review, error) {
	var out []policy.Review
	opts := &github.ListOptions{PerPage: 100}
	for {
		rs, resp, err := gh.PullRequests.ListReviews(ctx, t.Owner, t.Name, t.Number, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: listing reviews: %w", t, err)
		}
		for _, r := range rs {
			out = append(out, policy.Review{User: r.GetUser().GetLogin(), Bot: r.GetUser().GetType() == "Bot",
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
	ctx             context.Context
	gh              *github.Client
	t               target
	head, base, dir string
	updates         bool // ignore merges of the base branch (ignore_update_merges)
	member          map[string]bool
	changed         map[string]bool
}

// InTeam says whether user is an active member of team; a team that does
// not exist makes the policy unusable rather than quietly empty.
func (j *githubJudge) InTeam(user, team string) (bool, error) {
	key := strings.ToLower(team + "\x00" + user)
	if v, ok := j.member[key]; ok {
		return v, nil
	}
	org, slug, _ := strings.Cut(team, "/")
	m, resp, err := j.gh.Teams.GetTeamMembershipBySlug(j.ctx, org, slug, user)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		if _, resp, err := j.gh.Teams.GetTeamBySlug(j.ctx, org, slug); resp != nil && resp.StatusCode == http.StatusNotFound {
			return false, &policyError{fmt.Errorf("team %s does not exist (or the App cannot see it: grant it the organization's Members permission)", team)}
		} else if err != nil {
			return false, fmt.Errorf("team %s: %w", team, err)
		}
		j.member[key] = false
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("team %s: %w", team, err)
	}
	j.member[key] = m.GetState() == "active"
	return j.member[key], nil
}

// HasRole says whether user has one of roles on the repository.
func (j *githubJudge) HasRole(user string, roles ...string) (bool, error) {
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

// governed says whether a path is one the policy governs.
func (j *githubJudge) governed(name string) bool {
	return name != "" && (registry.Reads(j.dir, name) || policy.IsGovernance(name))
}

// ChangedSince says whether an approval of commit is stale. Without
// ignore_update_merges, any change to a governed file between commit and
// the head (or a head that no longer contains commit) makes it stale.
// With it, the approval stands while the pull request's own change is the
// same: the governed files it changes against its merge base, with their
// contents, are those it changed at commit, and the base branch changed
// none of them in between. A merge of the base branch that brings other
// files keeps approvals; one that edits the pull request's files does not.
func (j *githubJudge) ChangedSince(commit string) (bool, error) {
	if commit == j.head {
		return false, nil
	}
	if v, ok := j.changed[commit]; ok {
		return v, nil
	}
	var changed bool
	var err error
	if j.updates {
		changed, err = j.ownChangeDiffers(commit)
	} else {
		changed, err = j.anyChange(commit)
	}
	if err != nil {
		return false, err
	}
	j.changed[commit] = changed
	return changed, nil
}

func (j *githubJudge) anyChange(commit string) (bool, error) {
	cmp, gone, err := j.compare(commit, j.head)
	if gone || err != nil {
		return gone, err
	}
	changed := cmp.GetStatus() == "diverged" || cmp.GetStatus() == "behind"
	for _, f := range cmp.Files {
		changed = changed || j.governed(f.GetFilename()) || j.governed(f.GetPreviousFilename())
	}
	// A comparison lists at most 300 files: beyond that, assume a change.
	return changed || len(cmp.Files) >= 300, nil
}

func (j *githubJudge) ownChangeDiffers(commit string) (bool, error) {
	then, gone, err := j.compare(j.base, commit)
	if gone || err != nil {
		return gone, err
	}
	now, gone, err := j.compare(j.base, j.head)
	if gone || err != nil {
		return gone, err
	}
	own := func(c *github.CommitsComparison) map[string]string {
		m := map[string]string{}
		for _, f := range c.Files {
			if j.governed(f.GetFilename()) || j.governed(f.GetPreviousFilename()) {
				m[f.GetPreviousFilename()+"\x00"+f.GetFilename()] = f.GetStatus() + " " + f.GetSHA()
			}
		}
		return m
	}
	if len(then.Files) >= 300 || len(now.Files) >= 300 || !maps.Equal(own(then), own(now)) {
		return true, nil
	}
	from, to := then.GetMergeBaseCommit().GetSHA(), now.GetMergeBaseCommit().GetSHA()
	if from == to {
		return false, nil
	}
	// The base branch moved under the pull request: it must not have
	// changed a file the pull request changes.
	between, gone, err := j.compare(from, to)
	if gone || err != nil {
		return gone, err
	}
	if len(between.Files) >= 300 {
		return true, nil
	}
	mine := own(now)
	for _, f := range between.Files {
		for k := range mine {
			if old, name, _ := strings.Cut(k, "\x00"); f.GetFilename() == name || f.GetFilename() == old {
				return true, nil
			}
		}
	}
	return false, nil
}

// compare compares two commits; gone is true when one no longer exists
// (a force push removed it).
func (j *githubJudge) compare(base, head string) (cmp *github.CommitsComparison, gone bool, err error) {
	cmp, resp, err := j.gh.Repositories.CompareCommits(j.ctx, j.t.Owner, j.t.Name, base, head, &github.ListOptions{PerPage: 300})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("comparing %s with %s: %w", short(base), short(head), err)
	}
	return cmp, false, nil
}

// missingFirst leads with what a decision still needs, one line per
// requirement naming who can satisfy it.
func missingFirst(d policy.Decision) string {
	lines := d.MissingLines()
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("**Missing:**\n\n")
	for _, l := range lines {
		b.WriteString("- " + l + "\n")
	}
	return b.String() + "\n"
}
