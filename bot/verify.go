package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/gitrev"
)

// maxVerified bounds the commits of the default branch verified at once,
// walking back from its head to the registry's commit.
const maxVerified = 100

// Labels and markers of the issue the App keeps about refused commits.
const (
	labelUnverified = "sip: unverified main"
	verifyMarker    = "<!-- sip:main-verification -->"
)

// verdict is why the policy, as of a commit's parent, would have refused
// the commit.
type verdict struct {
	commit, parent string
	pull           int      // the pull request that brought it (0: none)
	paths          []string // the governed files it changed
	missing        []string // what it lacked, one line each
}

// mainState is the default branch verified from the registry's commit to
// its head.
type mainState struct {
	// syncable is the newest commit whose every governed change since the
	// registry's commit was approved (or reverted, or overridden).
	syncable string
	// refused is the first refused commit not resolved since (nil: none).
	refused *verdict
	// overridden says which commits an override let through: by whom,
	// when and why, for the check.
	overridden []string
}

// verifyMain verifies each commit of the default branch after from, up to
// head, first parent only: would the policy as of the commit's parent
// have approved it at merge time? While a refused commit stands, later
// commits are judged by the policy of the last verified commit, so an
// unapproved policy change cannot approve what follows it. A refused commit stays refused until
// an override names it or a later commit puts back every governed file it
// changed; commits after it are verified in their own right but are not
// syncable while it stands, since their trees contain its change.
func (a *App) verifyMain(ctx context.Context, gh *github.Client, t target, from, head string) (mainState, error) {
	var chain []*github.RepositoryCommit
	for at := head; at != from; {
		if len(chain) == maxVerified {
			return mainState{syncable: from, refused: &verdict{commit: head, missing: []string{fmt.Sprintf(
				"the registry's commit %s is not among the last %d commits of `%s` (the branch was rewritten, or moved too far at once): "+
					"nothing after it can be verified", short(from), maxVerified, t.DefaultBranch)}}}, nil
		}
		c, _, err := gh.Repositories.GetCommit(ctx, t.Owner, t.Name, at, &github.ListOptions{PerPage: 1})
		if err != nil {
			return mainState{}, fmt.Errorf("%s: reading commit %s: %w", t, short(at), err)
		}
		chain = append(chain, c)
		if len(c.Parents) == 0 {
			return mainState{syncable: from, refused: &verdict{commit: head, missing: []string{fmt.Sprintf(
				"the registry's commit %s is not an ancestor of `%s`: the branch was rewritten", short(from), t.DefaultBranch)}}}, nil
		}
		at = c.Parents[0].GetSHA()
	}
	slices.Reverse(chain)
	st := mainState{syncable: from}
	var pending []*verdict
	for _, c := range chain {
		commit, parent := c.GetSHA(), c.Parents[0].GetSHA()
		// A refused commit whose every governed file is back as it was
		// is resolved by this one.
		kept := pending[:0]
		for _, p := range pending {
			back, err := a.unchanged(ctx, gh, t, p.parent, commit, p.paths)
			if err != nil {
				return mainState{}, err
			}
			if !back {
				kept = append(kept, p)
			}
		}
		pending = kept
		v, o, err := a.judgeCommit(ctx, gh, t, parent, commit, st.syncable)
		if err != nil {
			return mainState{}, err
		}
		if o != nil {
			st.overridden = append(st.overridden, fmt.Sprintf("%s: by @%s at %s, because %s", short(commit), o.By,
				o.At.Format("2006-01-02 15:04 UTC"), quoteLine(o.Reason)))
		}
		if v != nil {
			pending = append(pending, v)
		}
		if len(pending) == 0 {
			st.syncable = commit
		}
	}
	if len(pending) > 0 {
		st.refused = pending[0]
	}
	return st, nil
}

// governedFiles lists the governed files a comparison shows changed (both
// names of a rename); ok is false when the comparison is too long to tell.
func (a *App) governedFiles(cmp *github.CommitsComparison) (paths []string, ok bool) {
	for _, f := range cmp.Files {
		for _, name := range []string{f.GetFilename(), f.GetPreviousFilename()} {
			if name != "" && (registry.Reads(a.cfg.Dir, name) || policy.IsGovernance(name)) && !slices.Contains(paths, name) {
				paths = append(paths, name)
			}
		}
	}
	slices.Sort(paths)
	return paths, len(cmp.Files) < 300
}

// unchanged says whether none of paths differs between two commits.
func (a *App) unchanged(ctx context.Context, gh *github.Client, t target, from, to string, paths []string) (bool, error) {
	cmp, _, err := gh.Repositories.CompareCommits(ctx, t.Owner, t.Name, from, to, &github.ListOptions{PerPage: 300})
	if err != nil {
		return false, fmt.Errorf("%s: comparing %s with %s: %w", t, short(from), short(to), err)
	}
	if len(cmp.Files) >= 300 {
		return false, nil
	}
	for _, f := range cmp.Files {
		if slices.Contains(paths, f.GetFilename()) || slices.Contains(paths, f.GetPreviousFilename()) {
			return false, nil
		}
	}
	return true, nil
}

// judgeCommit decides one commit of the default branch against the policy
// in force (its parent's, or while a refusal stands, the last verified
// commit's): nil when approved (it changes no governed file, puts
// governed files back as the last syncable commit has them, was merged
// from a pull request with the approvals present and not stale and the
// validation check green, or an override names it or its pull request).
func (a *App) judgeCommit(ctx context.Context, gh *github.Client, t target, parent, commit, syncable string) (*verdict, *inbox.Override, error) {
	cmp, _, err := gh.Repositories.CompareCommits(ctx, t.Owner, t.Name, parent, commit, &github.ListOptions{PerPage: 300})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: comparing %s with %s: %w", t, short(parent), short(commit), err)
	}
	paths, complete := a.governedFiles(cmp)
	if len(paths) == 0 && complete {
		return nil, nil, nil
	}
	v := &verdict{commit: commit, parent: parent, paths: paths}
	if complete && syncable != parent {
		back, err := a.unchanged(ctx, gh, t, syncable, commit, paths)
		if err != nil || back {
			return nil, nil, err
		}
	}
	if o, err := a.overrideOf(ctx, t, "commit:"+commit); o != nil || err != nil {
		return nil, o, err
	}
	pr, err := a.mergedPull(ctx, gh, t, commit)
	if err != nil {
		return nil, nil, err
	}
	if pr == nil {
		v.missing = []string{fmt.Sprintf("it was pushed to `%s` without a pull request, so nobody approved it under the policy", t.DefaultBranch)}
		return v, nil, nil
	}
	v.pull = pr.GetNumber()
	// An override of the pull request at its merged head stands in for its
	// approvals, not for its validation check.
	pullOverride, err := a.overrideOf(ctx, t, pullSubject(pr.GetNumber(), pr.GetHead().GetSHA()))
	if err != nil {
		return nil, nil, err
	}
	gp := t
	gp.Number = pr.GetNumber()
	// The policy in force is that of the last verified commit: the
	// parent's, unless a refusal stands, whose policy change (if it made
	// one) must not judge what came after it.
	pol, err := a.policyAt(ctx, gh, t, syncable)
	var bad *policyError
	if errors.As(err, &bad) {
		v.missing = []string{fmt.Sprintf("`%s` at %s, the policy in force, cannot be used: %s", policy.Path, short(syncable), bad)}
		return v, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	token, err := a.gh.gitToken(ctx, t.Installation)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: installation token: %w", t, err)
	}
	files, err := gitrev.Commits(ctx, t.CloneURL, token, a.cfg.Dir, parent, commit)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", t, err)
	}
	touched := paths
	if !complete {
		touched = append(slices.Clone(paths), policy.GovernanceFiles...)
		for _, f := range files[commit] {
			touched = append(touched, f.Path)
		}
		for _, f := range files[parent] {
			touched = append(touched, f.Path)
		}
	}
	change := policy.ChangeOf(a.cfg.Dir, touched, a.docs.parse(files[parent]), a.docs.parse(files[commit]))
	d, err := a.decide(ctx, gh, gp, pr, change, pol, parent, pr.GetMergedAt().Time)
	if errors.As(err, &bad) {
		v.missing = []string{fmt.Sprintf("`%s` at %s cannot be used: %s", policy.Path, short(syncable), bad)}
		return v, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if pullOverride == nil {
		v.missing = d.MissingLines()
	}
	if touchesSIPs := slices.ContainsFunc(paths, func(p string) bool { return registry.Reads(a.cfg.Dir, p) }); touchesSIPs || !complete {
		runs, _, err := gh.Checks.ListCheckRunsForRef(ctx, t.Owner, t.Name, pr.GetHead().GetSHA(), &github.ListCheckRunsOptions{
			CheckName: github.String(ValidationCheck), AppID: github.Int64(a.cfg.AppID), Filter: github.String("latest")})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: listing check runs: %w", gp, err)
		}
		conclusion := "missing"
		var latest int64
		for _, r := range runs.CheckRuns {
			if r.GetName() == ValidationCheck && r.GetID() > latest {
				latest, conclusion = r.GetID(), r.GetStatus()
				if r.GetStatus() == "completed" {
					conclusion = r.GetConclusion()
				}
			}
		}
		if conclusion != "success" {
			v.missing = append(v.missing, fmt.Sprintf("the **%s** check on the pull request's head %s was not green (%s)",
				ValidationCheck, short(pr.GetHead().GetSHA()), conclusion))
		}
	}
	if len(v.missing) == 0 {
		if d.State == policy.Approved {
			return nil, nil, nil
		}
		return nil, pullOverride, nil
	}
	return v, nil, nil
}

// mergedPull is the pull request merged into the default branch as
// commit (nil when the commit was pushed without one).
func (a *App) mergedPull(ctx context.Context, gh *github.Client, t target, commit string) (*github.PullRequest, error) {
	prs, _, err := gh.PullRequests.ListPullRequestsWithCommit(ctx, t.Owner, t.Name, commit, &github.ListOptions{PerPage: 10})
	if err != nil {
		return nil, fmt.Errorf("%s: pull requests of %s: %w", t, short(commit), err)
	}
	for _, pr := range prs {
		if pr.GetMerged() || pr.MergedAt != nil {
			if pr.GetMergeCommitSHA() == commit && pr.GetBase().GetRef() == t.DefaultBranch {
				return pr, nil
			}
		}
	}
	return nil, nil
}

// pullSubject names a pull request at a head as an override's subject: an
// override covers what the pull request was when it was given.
func pullSubject(number int, head string) string { return fmt.Sprintf("pull:%d@%s", number, head) }

// overrideOf is the first override of subject on record (nil: none).
func (a *App) overrideOf(ctx context.Context, t target, subject string) (*inbox.Override, error) {
	os, err := a.store.Overrides(ctx, t.RepoID, subject)
	if err != nil || len(os) == 0 {
		return nil, err
	}
	return os[0], nil
}

// reportMain makes where the default branch stands visible: a check run on
// the refused commit (or a green one on the synced head), one issue kept
// current while a refusal stands and closed once it is resolved, the
// stored state (for /readyz) and the metric.
func (a *App) reportMain(ctx context.Context, gh *github.Client, t target, st mainState, head string) error {
	prev, err := a.store.Verification(ctx, t.RepoID)
	if errors.Is(err, registry.ErrNotFound) {
		prev, err = &inbox.Verification{RepoID: t.RepoID}, nil
	}
	if err != nil {
		return err
	}
	next := *prev
	next.UpdatedAt = a.now()
	if st.refused == nil {
		a.metrics.unverified.Set(0)
		next.Refused, next.Missing = "", ""
		if prev.Issue != 0 && prev.Refused != "" {
			body := fmt.Sprintf("%s\n✅ Resolved: every commit of `%s` up to %s is verified against the policy, and the registry serves it.\n\n"+
				"Before: %s was refused because:\n\n%s", verifyMarker, t.DefaultBranch, short(head), short(prev.Refused), prev.Missing)
			if _, _, err := gh.Issues.Edit(ctx, t.Owner, t.Name, prev.Issue, &github.IssueRequest{Body: github.String(body), State: github.String("closed")}); err != nil {
				return fmt.Errorf("%s#%d: closing: %w", t.fullName(), prev.Issue, err)
			}
		}
		if err := a.store.PutVerification(ctx, &next); err != nil {
			return err
		}
		summary := fmt.Sprintf("Every commit of `%s` up to this one was approved under the policy of its parent (or reverted, or overridden on record).", t.DefaultBranch)
		if len(st.overridden) > 0 {
			summary += "\n\nLet through by an override on record:\n\n- " + strings.Join(st.overridden, "\n- ") + "\n"
		}
		return a.postCheck(ctx, gh, t, head, checkResult{name: VerifyCheck, conclusion: "success", title: "Verified against the policy", summary: summary})
	}
	r := st.refused
	a.metrics.unverified.Set(1)
	var b strings.Builder
	fmt.Fprintf(&b, "The policy as of its parent would not have approved %s", short(r.commit))
	if r.pull > 0 {
		fmt.Fprintf(&b, " (merged from #%d)", r.pull)
	}
	b.WriteString(". Missing:\n\n")
	for _, m := range r.missing {
		fmt.Fprintf(&b, "- %s\n", m)
	}
	missing := b.String()
	howto := fmt.Sprintf("\nThe registry keeps serving %s and syncs nothing after it until this is resolved:\n\n"+
		"- **revert** the commit (a pull request that puts back every SIP and governance file it changed), or\n"+
		"- **override**: an admin under the policy the registry serves comments `/sip override <reason>` on this issue; "+
		"who, why and when are recorded.\n", short(st.syncable))
	next.Refused, next.Missing = r.commit, missing
	body := fmt.Sprintf("%s\n⛔ **A commit on `%s` was not approved under the policy.**\n\n%s%s", verifyMarker, t.DefaultBranch, missing, howto)
	title := fmt.Sprintf("Unverified commit %s on %s: the registry stopped syncing", short(r.commit), t.DefaultBranch)
	if prev.Issue == 0 {
		is, _, err := gh.Issues.Create(ctx, t.Owner, t.Name, &github.IssueRequest{Title: github.String(title), Body: github.String(body),
			Labels: &[]string{labelUnverified}})
		if err != nil {
			return fmt.Errorf("%s: opening the verification issue: %w", t, err)
		}
		next.Issue = is.GetNumber()
	} else if prev.Refused != r.commit || prev.Missing != missing {
		if _, _, err := gh.Issues.Edit(ctx, t.Owner, t.Name, prev.Issue, &github.IssueRequest{Title: github.String(title), Body: github.String(body),
			State: github.String("open")}); err != nil {
			return fmt.Errorf("%s#%d: updating: %w", t.fullName(), prev.Issue, err)
		}
	}
	if err := a.store.PutVerification(ctx, &next); err != nil {
		return err
	}
	summary := missing + howto
	if next.Issue != 0 {
		summary += fmt.Sprintf("\nIssue #%d tracks it.\n", next.Issue)
	}
	return a.postCheck(ctx, gh, t, r.commit, checkResult{name: VerifyCheck, conclusion: "failure",
		title: "Not approved under the policy: the registry did not sync it", summary: truncate(summary, maxMarkdown)})
}

// ReadyDetails says where the followed repository's default branch stands,
// for /readyz: "verified", or the refused commit and its issue.
func (a *App) ReadyDetails(ctx context.Context) map[string]string {
	out := map[string]string{}
	if a.cfg.Repository == "" {
		return out
	}
	repos, err := a.store.Repositories(ctx)
	if err != nil {
		return out
	}
	for _, r := range repos {
		if !strings.EqualFold(r.FullName, a.cfg.Repository) {
			continue
		}
		v, err := a.store.Verification(ctx, r.ID)
		switch {
		case errors.Is(err, registry.ErrNotFound):
			out["github_main"] = "not verified yet"
		case err != nil:
		case v.Refused != "":
			out["github_main"] = fmt.Sprintf("refused commit %s: the registry is not syncing (issue #%d)", short(v.Refused), v.Issue)
		default:
			out["github_main"] = "verified"
		}
	}
	return out
}
