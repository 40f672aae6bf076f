package gitrev

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/sipregistry/sip/registry"
)

// ErrRepository means the repository cannot be reached or read.
var ErrRepository = errors.New("cannot read repository")

// FetchOptions says which SIPs to read from which repository.
type FetchOptions struct {
	// Repo is a local path (a work tree or a bare repository) or a URL.
	Repo string
	// Ref is a branch, a tag or a commit SHA; empty means HEAD.
	Ref string
	// Dir is the folder of SIPs inside the repository (default "evaluations").
	Dir string
	// Token authenticates HTTPS fetches (a GitHub App installation token
	// is sent as user x-access-token). It never appears in errors or names.
	Token string
}

var shaRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })

// Fetch resolves the commit to sync and returns it as a source whose
// files are read on demand (Source.Load), so a sync of the commit the
// registry already holds costs one ref lookup. A local repository is read
// in place; a remote one is fetched into memory, one commit deep, with no
// tags and no work tree.
func Fetch(ctx context.Context, o FetchOptions) (registry.Source, error) {
	if o.Dir == "" {
		o.Dir = registry.DefaultDir
	}
	r, err := resolve(ctx, o)
	if err != nil {
		return registry.Source{}, err
	}
	src := registry.Source{Commit: r.hash.String(), Name: r.name + "@" + short(r.hash.String()), Dir: o.Dir}
	src.Load = func(ctx context.Context) ([]registry.File, error) {
		if r.fetch != nil {
			if err := r.fetch(ctx); err != nil {
				return nil, err
			}
		}
		return readCommit(r.repo, r.hash, o.Dir, r.name)
	}
	return src, nil
}

// resolved is a commit found but, for a remote, not fetched yet.
type resolved struct {
	repo  *git.Repository
	hash  plumbing.Hash
	name  string
	fetch func(ctx context.Context) error // nil when the objects are at hand
}

func readCommit(repo *git.Repository, hash plumbing.Hash, dir, name string) ([]registry.File, error) {
	commit, err := repo.CommitObject(hash)
	if err != nil {
		return nil, fmt.Errorf("%s: commit %s: %w", name, hash, ErrRepository)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, ErrRepository)
	}
	files := []registry.File{}
	sub, err := tree.Tree(dir)
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return files, nil // no SIPs at this commit
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", name, dir, ErrRepository)
	}
	err = sub.Files().ForEach(func(f *object.File) error {
		if !registry.IsSIPFile(f.Name) || hidden(f.Name) || !f.Mode.IsFile() {
			return nil
		}
		content, err := read(f)
		if err != nil {
			return err
		}
		files = append(files, registry.File{Path: dir + "/" + f.Name, Content: content})
		return nil
	})
	return files, err
}

// resolve finds the repository and the commit to read.
func resolve(ctx context.Context, o FetchOptions) (*resolved, error) {
	local := strings.TrimPrefix(o.Repo, "file://")
	if info, err := os.Stat(local); err == nil && info.IsDir() {
		repo, err := git.PlainOpenWithOptions(local, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
		if err != nil {
			return nil, fmt.Errorf("%s: %v: %w", local, err, ErrRepository)
		}
		rev := o.Ref
		if rev == "" {
			rev = "HEAD"
		}
		hash, err := repo.ResolveRevision(plumbing.Revision(rev))
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", local, rev, ErrUnknownRevision)
		}
		abs, _ := filepath.Abs(local)
		return &resolved{repo: repo, hash: *hash, name: "git " + abs}, nil
	}
	return resolveRemote(ctx, o)
}

func resolveRemote(ctx context.Context, o FetchOptions) (*resolved, error) {
	name := "git " + redactURL(o.Repo)
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, err
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{o.Repo}})
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", name, err, ErrRepository)
	}
	var auth *githttp.BasicAuth
	if o.Token != "" {
		auth = &githttp.BasicAuth{Username: "x-access-token", Password: o.Token}
	}
	want := o.Ref
	if !shaRE().MatchString(want) {
		// Resolve a name (or HEAD) to its commit with one ls-remote.
		refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth})
		if err != nil {
			return nil, fmt.Errorf("%s: %v: %w", name, scrub(err, o.Token), ErrRepository)
		}
		hash, ok := findRef(refs, o.Ref)
		if !ok {
			return nil, fmt.Errorf("%s: %q: %w", name, o.Ref, ErrUnknownRevision)
		}
		want = hash.String()
	}
	fetch := func(ctx context.Context) error {
		err := remote.FetchContext(ctx, &git.FetchOptions{
			RefSpecs: []config.RefSpec{config.RefSpec(want + ":refs/sync/" + want)},
			Depth:    1,
			Tags:     git.NoTags,
			Auth:     auth,
		})
		switch {
		case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
			return nil
		case errors.Is(err, git.ErrExactSHA1NotSupported):
			return fmt.Errorf("%s: the server cannot fetch a single commit (%s); sync a branch or tag name: %w", name, short(want), ErrRepository)
		}
		return fmt.Errorf("%s: fetch %s: %v: %w", name, short(want), scrub(err, o.Token), ErrRepository)
	}
	return &resolved{repo: repo, hash: plumbing.NewHash(want), name: name, fetch: fetch}, nil
}

// findRef finds ref among advertised references: HEAD when empty,
// then a branch, then a tag (peeled to its commit when advertised).
func findRef(refs []*plumbing.Reference, ref string) (plumbing.Hash, bool) {
	byName := map[plumbing.ReferenceName]*plumbing.Reference{}
	for _, r := range refs {
		byName[r.Name()] = r
	}
	var candidates []plumbing.ReferenceName
	if ref == "" || ref == "HEAD" {
		candidates = []plumbing.ReferenceName{plumbing.HEAD}
	} else {
		candidates = []plumbing.ReferenceName{plumbing.ReferenceName(ref), plumbing.NewBranchReferenceName(ref),
			plumbing.ReferenceName(plumbing.NewTagReferenceName(ref).String() + "^{}"), plumbing.NewTagReferenceName(ref)}
	}
	for _, c := range candidates {
		r, ok := byName[c]
		for i := 0; ok && r.Type() == plumbing.SymbolicReference && i < 5; i++ {
			r, ok = byName[r.Target()]
		}
		if ok && !r.Hash().IsZero() {
			return r.Hash(), true
		}
	}
	return plumbing.ZeroHash, false
}

// redactURL drops credentials from a URL for logs and names.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// scrub removes the token from an error's text.
func scrub(err error, token string) string {
	msg := err.Error()
	if token != "" {
		msg = strings.ReplaceAll(msg, token, "***")
	}
	return msg
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// Commits fetches several commits of a remote repository in one round
// trip, each one deep, and returns the SIP files under dir of each, by
// SHA. The GitHub App reads a pull request's merge base and head this way.
func Commits(ctx context.Context, repoURL, token, dir string, shas ...string) (map[string][]registry.File, error) {
	name := "git " + redactURL(repoURL)
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, err
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{repoURL}})
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", name, err, ErrRepository)
	}
	var specs []config.RefSpec
	seen := map[string]bool{}
	for _, sha := range shas {
		if !shaRE().MatchString(sha) {
			return nil, fmt.Errorf("%s: %q is not a commit SHA: %w", name, sha, registry.ErrInvalid)
		}
		if !seen[sha] {
			seen[sha] = true
			specs = append(specs, config.RefSpec(sha+":refs/sync/"+sha))
		}
	}
	var auth *githttp.BasicAuth
	if token != "" {
		auth = &githttp.BasicAuth{Username: "x-access-token", Password: token}
	}
	err = remote.FetchContext(ctx, &git.FetchOptions{RefSpecs: specs, Depth: 1, Tags: git.NoTags, Auth: auth})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, fmt.Errorf("%s: fetch: %v: %w", name, scrub(err, token), ErrRepository)
	}
	out := map[string][]registry.File{}
	for sha := range seen {
		files, err := readCommit(repo, plumbing.NewHash(sha), dir, name)
		if err != nil {
			return nil, err
		}
		out[sha] = files
	}
	return out, nil
}
