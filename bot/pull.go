package bot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/gitrev"
)

// Labels the App puts on SIP pull requests.
const (
	labelNew    = "new SIP"
	labelEdited = "edited SIP"
)

// checkPull validates a pull request and applies the approval policy: it
// reads the pull request as it is now (not as the event described it),
// posts both check runs on its head, keeps its one comment and its labels
// up to date, and asks for a new check of other pull requests that claim
// the same SIP numbers.
func (a *App) checkPull(ctx context.Context, t target) error {
	gh := a.gh.installation(t.Installation).client
	pr, _, err := gh.PullRequests.Get(ctx, t.Owner, t.Name, t.Number)
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	if pr.GetState() != "open" {
		return nil
	}
	if t.DefaultBranch == "" {
		t.DefaultBranch = pr.GetBase().GetRepo().GetDefaultBranch()
	}
	if t.CloneURL == "" {
		t.CloneURL = pr.GetBase().GetRepo().GetCloneURL()
	}
	head := pr.GetHead().GetSHA()
	// A pull request that changes no SIP and no governance file needs no
	// git: both checks pass, so that branch protection can require them on
	// every pull request.
	touchesSIPs, governance, err := a.pullTouches(ctx, gh, t)
	if err != nil {
		return err
	}
	if !touchesSIPs && !governance {
		if err := a.postCheck(ctx, gh, t, head, checkResult{name: ValidationCheck, conclusion: "success",
			title: "No SIP file changed", summary: "This pull request changes no file under `" + a.cfg.Dir + "/` and no governance file."}); err != nil {
			return err
		}
		return a.postCheck(ctx, gh, t, head, checkResult{name: ApprovalCheck, conclusion: "success",
			title: "No SIP approval needed", summary: "This pull request changes no SIP and no governance file."})
	}
	// Validate what would merge now: the pull request's changes since its
	// merge base applied to the base branch as it is now.
	cmp, _, err := gh.Repositories.CompareCommits(ctx, t.Owner, t.Name, pr.GetBase().GetRef(), head, &github.ListOptions{PerPage: 1})
	if err != nil {
		return fmt.Errorf("%s: comparing with %s: %w", t, pr.GetBase().GetRef(), err)
	}
	base, tip := cmp.GetMergeBaseCommit().GetSHA(), cmp.GetBaseCommit().GetSHA()
	if tip == "" {
		tip = base
	}
	token, err := a.gh.gitToken(ctx, t.Installation)
	if err != nil {
		return fmt.Errorf("%s: installation token: %w", t, err)
	}
	files, err := gitrev.Commits(ctx, t.CloneURL, token, a.cfg.Dir, base, tip, head)
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	ch := diffFiles(files[base], files[head])
	merged, conflicts := registry.MergeFiles(files[base], files[tip], files[head])
	tipDocs, mergedDocs := a.docs.parse(files[tip]), a.docs.parse(merged)

	others, claimed, err := a.claimedElsewhere(ctx, gh, t, tipDocs)
	if err != nil {
		return err
	}
	rep := &pullReport{Files: len(merged), Touched: ch.paths(), Conflicts: conflicts, Branch: pr.GetBase().GetRef()}
	users, err := authorUsers(ctx, gh, rep.Touched, mergedDocs)
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	// The policy in force sets rule severities and sections; an unreadable
	// one leaves the defaults here and fails the approval. For the
	// registry's repository it is the policy of the commit the registry
	// serves: a policy change merged without its approvals is not in
	// force until it is verified.
	pol, _, polErr := a.trustedPolicy(ctx, gh, t)
	var bad *policyError
	if polErr != nil && !errors.As(polErr, &bad) {
		return polErr
	}
	opts := registry.Options{Dir: a.cfg.Dir, Key: a.cfg.SealingKey}
	if pol != nil {
		pol.Apply(&opts)
	}
	opts.Body.Exists = filesIn(a.cfg.Dir, merged)
	onBaseOpts := opts
	opts.Base = &registry.Snapshot{Name: pr.GetBase().GetRef() + " at " + short(tip), Docs: tipDocs}
	opts.Claimed, opts.Users = claimed, users
	all := registry.Validate(mergedDocs, opts)
	// Only what the pull request changes decides its check: problems the
	// base branch already has, in files it leaves alone, are shown as
	// notices (one broken SIP on main must not fail every pull request).
	onBaseOpts.Body.Exists = filesIn(a.cfg.Dir, files[tip])
	onBase := registry.Validate(tipDocs, onBaseOpts)
	rep.Problems, rep.Inherited = splitInherited(all, onBase, rep.Touched)
	rep.Preview = previewOf(tipDocs, mergedDocs)
	touched := rep.Touched
	if governance {
		touched = append(slices.Clone(touched), policy.GovernanceFiles...)
	}
	change := policy.ChangeOf(a.cfg.Dir, touched, tipDocs, mergedDocs)
	vc := checkResult{name: ValidationCheck, conclusion: rep.conclusion(), title: rep.title(), summary: rep.summary(), annotations: rep.annotations()}
	if !touchesSIPs {
		vc = checkResult{name: ValidationCheck, conclusion: "success", title: "No SIP file changed",
			summary: "This pull request changes a governance file and no file under `" + a.cfg.Dir + "/`; an admin approves it."}
	}
	if governance {
		// The policy as this pull request would leave it must be readable:
		// merging a broken one would block every later pull request.
		perr, err := a.proposedPolicy(ctx, gh, t, head)
		if err != nil {
			return err
		}
		if perr != nil {
			vc.conclusion, vc.title = "failure", "Invalid approval policy"
			vc.summary = fmt.Sprintf("`%s` as this pull request leaves it cannot be read: %s\n\n%s", policy.Path, perr, vc.summary)
		}
	}
	if err := a.postCheck(ctx, gh, t, head, vc); err != nil {
		return err
	}
	decision, err := a.approve(ctx, gh, t, pr, change, pol, polErr)
	if err != nil {
		return err
	}
	if !touchesSIPs {
		return nil
	}
	if err := a.upsertComment(ctx, gh, t, commentBody(rep, decision)); err != nil {
		return err
	}
	if err := a.label(ctx, gh, t, pr, ch); err != nil {
		return err
	}
	if err := a.recheckCollisions(ctx, t, head, mergedDocs, tipDocs, others); err != nil {
		return err
	}
	if pol != nil && decision != nil && decision.State == policy.Approved && vc.conclusion == "success" && len(conflicts) == 0 &&
		pol.SafeEdit(change, pr.GetUser().GetLogin()) {
		return a.autoMerge(ctx, gh, t, pr, change)
	}
	return nil
}

// autoMerge merges a safe edit (auto_merge) whose checks are green, at the
// head that was checked: GitHub refuses the merge if the head moved, and
// applies the branch's protection (other required checks) itself. The
// merge is recorded in a comment, the log and a metric.
func (a *App) autoMerge(ctx context.Context, gh *github.Client, t target, pr *github.PullRequest, change policy.Change) error {
	head := pr.GetHead().GetSHA()
	res, resp, err := gh.PullRequests.Merge(ctx, t.Owner, t.Name, t.Number, "", &github.PullRequestOptions{SHA: head, MergeMethod: "merge"})
	if resp != nil && (resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusConflict ||
		resp.StatusCode == http.StatusForbidden && !isRateLimit(err)) {
		// Not mergeable now (another required check, a new head), or the
		// App may not merge (Contents is read-only): a person merges it,
		// or the next event tries again.
		a.log.Info("safe edit not merged yet", "pull", t.String(), "status", resp.StatusCode)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: merging: %w", t, err)
	}
	a.metrics.autoMerges.Inc()
	a.log.Info("safe edit merged", "pull", t.String(), "author", pr.GetUser().GetLogin(), "head", head, "merge", res.GetSHA())
	body := fmt.Sprintf("<!-- sip:auto-merged -->\nMerged by the App at %s: @%s, an author of %s, edited only that draft, and every check was green "+
		"(`auto_merge` in `%s`). Merge commit %s.", short(head), pr.GetUser().GetLogin(), change.SIPs[0].Name(), policy.Path, short(res.GetSHA()))
	if _, _, err := gh.Issues.CreateComment(ctx, t.Owner, t.Name, t.Number, &github.IssueComment{Body: github.String(body)}); err != nil {
		return fmt.Errorf("%s: recording the merge: %w", t, err)
	}
	return nil
}

// filesIn says which files of the SIP folder exist, for the links of SIP
// bodies: the App fetches only the files validation reads, so it can tell
// only of those.
func filesIn(dir string, files []registry.File) func(string) (bool, bool) {
	have := make(map[string]bool, len(files))
	for _, f := range files {
		have[f.Path] = true
	}
	return func(p string) (exists, known bool) {
		if !registry.Reads(dir, p) {
			return false, false
		}
		return have[p], true
	}
}

// pullClosed asks for a new check of the open pull requests whose numbers
// collided with a pull request that was just closed.
func (a *App) pullClosed(ctx context.Context, t target) error {
	gh := a.gh.installation(t.Installation).client
	mine, err := a.addedNumbers(ctx, gh, t, t.Number)
	if err != nil || len(mine) == 0 {
		return err
	}
	open, err := a.openPulls(ctx, gh, t)
	if err != nil {
		return err
	}
	for _, pr := range open {
		theirs, err := a.addedNumbers(ctx, gh, t, pr.GetNumber())
		if err != nil {
			return err
		}
		if intersects(mine, theirs) {
			other := t
			other.Number = pr.GetNumber()
			id := fmt.Sprintf("sip:recheck:%d:%d@%s:closed:%d", t.RepoID, other.Number, pr.GetHead().GetSHA(), t.Number)
			if err := a.enqueue(ctx, id, eventCheckPull, pullKey(t.RepoID, other.Number), other); err != nil {
				return err
			}
		}
	}
	return nil
}

// docCache keeps parsed SIPs by path and content, so that a check reads
// again only what changed since the last one (documents are read-only
// after Parse, so checks share them). It is cleared when full.
type docCache struct {
	mu   sync.Mutex
	docs map[[sha256.Size]byte]*registry.Document
}

const maxCachedDocs = 50_000

// parse parses files, taking unchanged ones from the cache.
func (c *docCache) parse(files []registry.File) []*registry.Document {
	keys := make([][sha256.Size]byte, len(files))
	out := make([]*registry.Document, len(files))
	var missing []registry.File
	var at []int
	c.mu.Lock()
	for i, f := range files {
		h := sha256.New()
		h.Write([]byte(f.Path))
		h.Write([]byte{0})
		h.Write(f.Content)
		h.Sum(keys[i][:0])
		if d, ok := c.docs[keys[i]]; ok {
			out[i] = d
			continue
		}
		missing = append(missing, f)
		at = append(at, i)
	}
	c.mu.Unlock()
	parsed := registry.ParseFiles(missing)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.docs == nil || len(c.docs)+len(parsed) > maxCachedDocs {
		c.docs = map[[sha256.Size]byte]*registry.Document{}
	}
	for j, d := range parsed {
		out[at[j]] = d
		c.docs[keys[at[j]]] = d
	}
	return out
}

// pullTouches says whether a pull request adds, edits, renames or deletes
// a file that validation or sync reads, or a governance file. GitHub lists
// at most 3,000 files of a pull request: one that long is taken to touch
// both.
func (a *App) pullTouches(ctx context.Context, gh *github.Client, t target) (sips, governance bool, err error) {
	opts := &github.ListOptions{PerPage: 100}
	n := 0
	for {
		files, resp, err := gh.PullRequests.ListFiles(ctx, t.Owner, t.Name, t.Number, opts)
		if err != nil {
			return false, false, fmt.Errorf("%s: listing files: %w", t, err)
		}
		for _, f := range files {
			for _, name := range []string{f.GetFilename(), f.GetPreviousFilename()} {
				sips = sips || name != "" && registry.Reads(a.cfg.Dir, name)
				governance = governance || policy.IsGovernance(name)
			}
		}
		n += len(files)
		if resp.NextPage == 0 {
			if n >= 3000 {
				return true, true, nil
			}
			return sips, governance, nil
		}
		opts.Page = resp.NextPage
	}
}

// proposedPolicy reads the policy file at the pull request's head. It
// returns why the file is invalid (nil when it is absent, meaning the
// defaults, or valid), or err when GitHub could not be asked.
func (a *App) proposedPolicy(ctx context.Context, gh *github.Client, t target, head string) (invalid, err error) {
	file, _, resp, err := gh.Repositories.GetContents(ctx, t.Owner, t.Name, policy.Path, &github.RepositoryContentGetOptions{Ref: head})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s at %s: %w", t, policy.Path, short(head), err)
	}
	content, err := file.GetContent()
	if err != nil {
		return err, nil
	}
	p, invalid := policy.Parse([]byte(content))
	if invalid != nil {
		return invalid, nil
	}
	if bad, err := verifyPeople(ctx, gh, p, true); bad != nil || err != nil {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		return bad, nil
	}
	return nil, nil
}

// openPull is another open pull request and the SIP numbers it adds.
type openPull struct {
	number  int
	head    string
	numbers []int
}

// claimedElsewhere lists the repository's other open pull requests that
// add SIPs, and the numbers that those opened before this one claim (by
// file name), for the number-collision rule.
func (a *App) claimedElsewhere(ctx context.Context, gh *github.Client, t target, baseDocs []*registry.Document) ([]openPull, map[int]string, error) {
	inBase := map[int]bool{}
	for _, d := range baseDocs {
		if d.SIP != nil {
			inBase[d.SIP.Number] = true
		}
	}
	open, err := a.openPulls(ctx, gh, t)
	if err != nil {
		return nil, nil, err
	}
	claimed := map[int]int{} // number → the earliest pull request claiming it
	var others []openPull
	for _, pr := range open {
		if pr.GetNumber() == t.Number {
			continue
		}
		nums, err := a.addedNumbers(ctx, gh, t, pr.GetNumber())
		if err != nil {
			return nil, nil, err
		}
		nums = slices.DeleteFunc(nums, func(n int) bool { return inBase[n] })
		// First come keeps the number: only pull requests opened before
		// this one (a lower number) hold a claim against it.
		if pr.GetNumber() < t.Number {
			for _, n := range nums {
				if prev, ok := claimed[n]; !ok || prev > pr.GetNumber() {
					claimed[n] = pr.GetNumber()
				}
			}
		}
		if len(nums) > 0 {
			others = append(others, openPull{number: pr.GetNumber(), head: pr.GetHead().GetSHA(), numbers: nums})
		}
	}
	who := make(map[int]string, len(claimed))
	for n, pr := range claimed {
		who[n] = fmt.Sprintf("pull request #%d", pr)
	}
	return others, who, nil
}

// recheckCollisions asks for a new check of each other pull request that
// claims a number this one adds, once per pair of heads, so that both
// report the collision (and both stop reporting it when it is resolved).
func (a *App) recheckCollisions(ctx context.Context, t target, head string, headDocs, baseDocs []*registry.Document, others []openPull) error {
	inBase := map[int]bool{}
	for _, d := range baseDocs {
		if d.SIP != nil {
			inBase[d.SIP.Number] = true
		}
	}
	var mine []int
	for _, d := range headDocs {
		if d.SIP != nil && !inBase[d.SIP.Number] {
			mine = append(mine, d.SIP.Number)
		}
	}
	for _, o := range others {
		if !intersects(mine, o.numbers) {
			continue
		}
		other := t
		other.Number, other.Force = o.number, false
		id := fmt.Sprintf("sip:recheck:%d:%d@%s:%d@%s", t.RepoID, o.number, o.head, t.Number, head)
		if err := a.enqueue(ctx, id, eventCheckPull, pullKey(t.RepoID, o.number), other); err != nil {
			return err
		}
	}
	return nil
}

// openPulls lists a repository's open pull requests.
func (a *App) openPulls(ctx context.Context, gh *github.Client, t target) ([]*github.PullRequest, error) {
	var all []*github.PullRequest
	opts := &github.PullRequestListOptions{State: "open", ListOptions: github.ListOptions{PerPage: 100}}
	for {
		prs, resp, err := gh.PullRequests.List(ctx, t.Owner, t.Name, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: listing open pull requests: %w", t.fullName(), err)
		}
		all = append(all, prs...)
		if resp.NextPage == 0 || len(all) >= 1000 {
			return all, nil
		}
		opts.Page = resp.NextPage
	}
}

// addedNumbers lists the SIP numbers of the SIP files a pull request adds.
func (a *App) addedNumbers(ctx context.Context, gh *github.Client, t target, n int) ([]int, error) {
	var nums []int
	opts := &github.ListOptions{PerPage: 100}
	for {
		files, resp, err := gh.PullRequests.ListFiles(ctx, t.Owner, t.Name, n, opts)
		if err != nil {
			return nil, fmt.Errorf("%s#%d: listing files: %w", t.fullName(), n, err)
		}
		for _, f := range files {
			if f.GetStatus() != "added" && f.GetStatus() != "renamed" && f.GetStatus() != "copied" {
				continue
			}
			if num, ok := registry.NumberOf(a.cfg.Dir, f.GetFilename()); ok {
				nums = append(nums, num)
			}
		}
		if resp.NextPage == 0 {
			return nums, nil
		}
		opts.Page = resp.NextPage
	}
}

func intersects(a, b []int) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// changes are the SIP files a pull request adds, modifies and removes.
type changes struct{ added, modified, removed []string }

func (c changes) paths() []string {
	out := slices.Concat(c.added, c.modified, c.removed)
	slices.Sort(out)
	return out
}

func diffFiles(base, head []registry.File) changes {
	before := map[string][]byte{}
	for _, f := range base {
		before[f.Path] = f.Content
	}
	var c changes
	for _, f := range head {
		old, ok := before[f.Path]
		switch {
		case !ok:
			c.added = append(c.added, f.Path)
		case !bytes.Equal(old, f.Content):
			c.modified = append(c.modified, f.Path)
		}
		delete(before, f.Path)
	}
	for p := range before {
		c.removed = append(c.removed, p)
	}
	slices.Sort(c.removed)
	return c
}

// previewOf says what a merge would change in the registry, by SIP id.
func previewOf(base, head []*registry.Document) preview {
	describe := func(d *registry.Document) string {
		return fmt.Sprintf("SIP-%d `%s` (%s %s)", d.SIP.Number, d.SIP.ID, d.SIP.Name, d.SIP.Version)
	}
	before := map[string]*registry.Document{}
	for _, d := range base {
		if d.SIP != nil && d.SIP.ID != "" {
			before[d.SIP.ID] = d
		}
	}
	var p preview
	for _, d := range head {
		if d.SIP == nil || d.SIP.ID == "" {
			continue
		}
		old, ok := before[d.SIP.ID]
		switch {
		case !ok:
			p.Added = append(p.Added, describe(d))
		case old.SHA256() != d.SHA256():
			p.Changed = append(p.Changed, describe(d))
		}
		delete(before, d.SIP.ID)
	}
	for _, d := range before {
		p.Deprecated = append(p.Deprecated, describe(d))
	}
	slices.Sort(p.Deprecated)
	return p
}

// label keeps the "new SIP" and "edited SIP" labels true.
func (a *App) label(ctx context.Context, gh *github.Client, t target, pr *github.PullRequest, c changes) error {
	want := map[string]bool{labelNew: len(c.added) > 0, labelEdited: len(c.modified)+len(c.removed) > 0}
	has := map[string]bool{}
	for _, l := range pr.Labels {
		has[l.GetName()] = true
	}
	var add []string
	for _, l := range []string{labelNew, labelEdited} {
		switch {
		case want[l] && !has[l]:
			add = append(add, l)
		case !want[l] && has[l]:
			resp, err := gh.Issues.RemoveLabelForIssue(ctx, t.Owner, t.Name, t.Number, l)
			if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
				return fmt.Errorf("%s: removing label %q: %w", t, l, err)
			}
		}
	}
	if len(add) > 0 {
		if _, _, err := gh.Issues.AddLabelsToIssue(ctx, t.Owner, t.Name, t.Number, add); err != nil {
			return fmt.Errorf("%s: adding labels: %w", t, err)
		}
	}
	return nil
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// isRateLimit says whether err is one of GitHub's rate-limit refusals
// (which arrive as 403 too, and are retried).
func isRateLimit(err error) bool {
	var rl *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	return errors.As(err, &rl) || errors.As(err, &abuse)
}
