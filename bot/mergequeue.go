package bot

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/gitrev"
)

// queuedPull finds the pull request a merge group's ref was made for:
// refs/heads/gh-readonly-queue/<base>/pr-<number>-<sha>.
var queuedPull = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/pr-(\d+)-[0-9a-f]+$`) })

// mergeGroup checks a merge queue's group as it would merge: the group's
// commit is the base branch with the queued pull requests applied, so
// validation reads it as is, against the group's base, and the approval
// is the queued pull request's under the policy in force (its approvals
// of its own head, not stale, or an override on record). Both checks are
// posted on the group's commit with the names branch protection requires.
// A group whose base branch has since moved past it (a push that is not
// in the group) is stale: both checks fail and the queue builds it anew.
func (a *App) mergeGroup(ctx context.Context, e *github.MergeGroupEvent) error {
	t, err := targetOf(e.Installation, e.Repo)
	if err != nil {
		return err
	}
	if e.GetAction() != "checks_requested" {
		return nil
	}
	mg := e.GetMergeGroup()
	head, base := mg.GetHeadSHA(), mg.GetBaseSHA()
	baseRef := strings.TrimPrefix(mg.GetBaseRef(), "refs/heads/")
	m := queuedPull().FindStringSubmatch(mg.GetHeadRef())
	if head == "" || base == "" || baseRef == "" || m == nil {
		return permanent(fmt.Errorf("a merge group without its commits or pull request (%q)", mg.GetHeadRef()))
	}
	number, _ := strconv.Atoi(m[1])
	gh := a.gh.installation(t.Installation).client
	fail := func(title, summary string) error {
		for _, name := range []string{ValidationCheck, ApprovalCheck} {
			if err := a.postCheck(ctx, gh, t, head, checkResult{name: name, conclusion: "failure", title: title, summary: summary}); err != nil {
				return err
			}
		}
		return nil
	}
	// Stale: the base branch holds a commit the group does not.
	br, _, err := gh.Repositories.GetBranch(ctx, t.Owner, t.Name, baseRef, 1)
	if err != nil {
		return fmt.Errorf("%s: branch %s: %w", t, baseRef, err)
	}
	if now := br.GetCommit().GetSHA(); now != base {
		cmp, _, err := gh.Repositories.CompareCommits(ctx, t.Owner, t.Name, now, head, &github.ListOptions{PerPage: 1})
		if err != nil {
			return fmt.Errorf("%s: comparing %s with %s: %w", t, short(now), short(head), err)
		}
		if s := cmp.GetStatus(); s != "ahead" && s != "identical" {
			return fail("Stale merge group: "+baseRef+" moved", fmt.Sprintf("`%s` is at %s, which this merge group (built on %s) does not contain: "+
				"it would not merge what was checked. The queue builds the group again.", baseRef, short(now), short(base)))
		}
	}
	if t.CloneURL == "" || t.DefaultBranch == "" {
		r, _, err := gh.Repositories.Get(ctx, t.Owner, t.Name)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		t.CloneURL, t.DefaultBranch = r.GetCloneURL(), r.GetDefaultBranch()
	}
	token, err := a.gh.gitToken(ctx, t.Installation)
	if err != nil {
		return fmt.Errorf("%s: installation token: %w", t, err)
	}
	files, err := gitrev.Commits(ctx, t.CloneURL, token, a.cfg.Dir, base, head)
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	baseDocs, headDocs := a.docs.parse(files[base]), a.docs.parse(files[head])
	ch := diffFiles(files[base], files[head])
	cmp, _, err := gh.Repositories.CompareCommits(ctx, t.Owner, t.Name, base, head, &github.ListOptions{PerPage: 300})
	if err != nil {
		return fmt.Errorf("%s: comparing %s with %s: %w", t, short(base), short(head), err)
	}
	touched := ch.paths()
	governance := len(cmp.Files) >= 300
	for _, f := range cmp.Files {
		governance = governance || policy.IsGovernance(f.GetFilename()) || policy.IsGovernance(f.GetPreviousFilename())
	}
	pol, _, polErr := a.trustedPolicy(ctx, gh, t)
	var bad *policyError
	if polErr != nil && !errors.As(polErr, &bad) {
		return polErr
	}
	opts := registry.Options{Dir: a.cfg.Dir, Key: a.cfg.SealingKey}
	if pol != nil {
		pol.Apply(&opts)
	}
	baseOpts := opts
	baseOpts.Body.Exists = filesIn(a.cfg.Dir, files[base])
	opts.Body.Exists = filesIn(a.cfg.Dir, files[head])
	opts.Base = &registry.Snapshot{Name: baseRef + " at " + short(base), Docs: baseDocs}
	rep := &pullReport{Files: len(files[head]), Touched: touched, Branch: baseRef}
	rep.Problems, rep.Inherited = splitInherited(registry.Validate(headDocs, opts), registry.Validate(baseDocs, baseOpts), touched)
	rep.Preview = previewOf(baseDocs, headDocs)
	if err := a.postCheck(ctx, gh, t, head, checkResult{name: ValidationCheck, conclusion: rep.conclusion(), title: rep.title(),
		summary: fmt.Sprintf("Merge group of #%d, as it would merge into `%s`.\n\n", number, baseRef) + rep.summary(), annotations: rep.annotations()}); err != nil {
		return err
	}
	// The approval: the queued pull request's, for what the group changes.
	pr, _, err := gh.PullRequests.Get(ctx, t.Owner, t.Name, number)
	if err != nil {
		return fmt.Errorf("%s#%d: %w", t.fullName(), number, err)
	}
	if polErr != nil {
		return a.postCheck(ctx, gh, t, head, checkResult{name: ApprovalCheck, conclusion: "failure", title: "Invalid approval policy",
			summary: fmt.Sprintf("`%s` cannot be used: %s", policy.Path, polErr)})
	}
	if governance {
		touched = append(slices.Clone(touched), policy.GovernanceFiles...)
	}
	change := policy.ChangeOf(a.cfg.Dir, touched, baseDocs, headDocs)
	p := t
	p.Number = number
	d, err := a.decide(ctx, gh, p, pr, change, pol, baseRef, pr.GetMergedAt().Time)
	if errors.As(err, &bad) {
		return a.postCheck(ctx, gh, t, head, checkResult{name: ApprovalCheck, conclusion: "failure", title: "Invalid approval policy",
			summary: fmt.Sprintf("`%s` cannot be used: %s", policy.Path, bad)})
	}
	if err != nil {
		return err
	}
	c := checkResult{name: ApprovalCheck, conclusion: "success", title: d.Title(),
		summary: fmt.Sprintf("Merge group of #%d (its approvals of %s).\n\n", number, short(pr.GetHead().GetSHA())) + missingFirst(d) + d.Explain() + pol.Summary()}
	if d.State != policy.Approved {
		c.conclusion = "failure"
		os, err := a.overridesOf(ctx, p, pr.GetHead().GetSHA())
		if err != nil {
			return err
		}
		if len(os) > 0 {
			c.conclusion = "success"
			c.title = truncate(fmt.Sprintf("Overridden by @%s: %s", os[0].By, strings.Join(strings.Fields(os[0].Reason), " ")), 200)
		}
	}
	return a.postCheck(ctx, gh, t, head, c)
}
