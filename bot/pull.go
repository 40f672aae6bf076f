package bot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-github/v62/github"

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
	cmp, _, err := gh.Repositories.CompareCommits(ctx, t.Owner, t.Name, pr.GetBase().GetRef(), head, &github.ListOptions{PerPage: 1})
	if err != nil {
		return fmt.Errorf("%s: comparing with %s: %w", t, pr.GetBase().GetRef(), err)
	}
	base := cmp.GetMergeBaseCommit().GetSHA()
	token, err := a.gh.gitToken(ctx, t.Installation)
	if err != nil {
		return fmt.Errorf("%s: installation token: %w", t, err)
	}
	files, err := gitrev.Commits(ctx, t.CloneURL, token, a.cfg.Dir, base, head)
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	baseFiles, headFiles := files[base], files[head]
	ch := diffFiles(baseFiles, headFiles)
	baseDocs, headDocs := a.docs.parse(baseFiles), a.docs.parse(headFiles)

	others, claimed, err := a.claimedElsewhere(ctx, gh, t, baseDocs)
	if err != nil {
		return err
	}
	rep := &pullReport{Files: len(headFiles), Touched: ch.paths()}
	rep.Problems = registry.Validate(headDocs, registry.Options{
		Base: &registry.Snapshot{Name: "base " + short(base), Docs: baseDocs}, Claimed: claimed})
	rep.Preview = previewOf(baseDocs, headDocs)

	if len(rep.Touched) == 0 {
		// Not a SIP pull request: both checks pass, so that branch
		// protection can require them on every pull request.
		rep.Problems = nil
		if err := a.postCheck(ctx, gh, t, head, checkResult{name: ValidationCheck, conclusion: "success",
			title: "No SIP file changed", summary: "This pull request changes no file under `" + a.cfg.Dir + "/`."}); err != nil {
			return err
		}
		return a.postCheck(ctx, gh, t, head, checkResult{name: ApprovalCheck, conclusion: "success",
			title: "No SIP approval needed", summary: "This pull request changes no SIP."})
	}
	if err := a.postCheck(ctx, gh, t, head, checkResult{name: ValidationCheck, conclusion: rep.conclusion(),
		title: rep.title(), summary: rep.summary(), annotations: rep.annotations()}); err != nil {
		return err
	}
	decision, err := a.approve(ctx, gh, t, pr)
	if err != nil {
		return err
	}
	if err := a.upsertComment(ctx, gh, t, commentBody(rep, decision)); err != nil {
		return err
	}
	if err := a.label(ctx, gh, t, pr, ch); err != nil {
		return err
	}
	return a.recheckCollisions(ctx, t, head, headDocs, baseDocs, others)
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

// openPull is another open pull request and the SIP numbers it adds.
type openPull struct {
	number  int
	head    string
	numbers []int
}

// claimedElsewhere lists the SIP numbers that the repository's other open
// pull requests add (by file name), for the number-collision rule.
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
	claimed := map[int]string{}
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
		for _, n := range nums {
			if _, ok := claimed[n]; !ok {
				claimed[n] = fmt.Sprintf("pull request #%d", pr.GetNumber())
			}
		}
		if len(nums) > 0 {
			others = append(others, openPull{number: pr.GetNumber(), head: pr.GetHead().GetSHA(), numbers: nums})
		}
	}
	return others, claimed, nil
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
			if num, ok := sipNumber(a.cfg.Dir, f.GetFilename()); ok {
				nums = append(nums, num)
			}
		}
		if resp.NextPage == 0 {
			return nums, nil
		}
		opts.Page = resp.NextPage
	}
}

// sipNumber reads N from DIR/SIP-N.md.
func sipNumber(dir, name string) (int, bool) {
	if path.Dir(name) != dir || !registry.IsSIPFile(name) {
		return 0, false
	}
	var n int
	if _, err := fmt.Sscanf(strings.TrimSuffix(path.Base(name), ".md"), "SIP-%d", &n); err != nil || registry.FileName(n) != path.Base(name) {
		return 0, false
	}
	return n, true
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
		case old.SHA256 != d.SHA256:
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
