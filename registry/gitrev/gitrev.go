// Package gitrev reads the SIP files of a git revision through go-git, so
// the edit rules can compare a working tree with its base.
package gitrev

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/sipregistry/sip/registry"
)

// Errors that say the revision cannot be read; both are configuration
// problems of the caller, not problems of the SIPs.
var (
	ErrNotRepository   = errors.New("not inside a git repository")
	ErrUnknownRevision = errors.New("unknown revision")
)

// Revision is a resolved commit of a repository.
type Revision struct {
	repo   *git.Repository
	root   string // the work tree's root, symlinks resolved
	commit *object.Commit
	Name   string // e.g. "origin/main (a1b2c3d)"
}

// Open resolves rev in the repository that contains dir.
func Open(dir, rev string) (*Revision, error) {
	abs, err := realPath(dir)
	if err != nil {
		return nil, err
	}
	repo, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotRepository)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, fmt.Errorf("%s: %w (a bare repository has no files to compare)", dir, ErrNotRepository)
	}
	root, err := realPath(wt.Filesystem.Root())
	if err != nil {
		return nil, err
	}
	hash, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, fmt.Errorf("%q: %w", rev, ErrUnknownRevision)
	}
	commit, err := repo.CommitObject(*hash)
	if err != nil {
		return nil, fmt.Errorf("%q is not a commit: %w", rev, ErrUnknownRevision)
	}
	return &Revision{repo: repo, root: root, commit: commit, Name: fmt.Sprintf("%s (%s)", rev, hash.String()[:7])}, nil
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r, nil
	}
	// The path may be missing from the work tree (a deleted folder):
	// resolve its nearest existing parent instead.
	dir := filepath.Dir(abs)
	if dir == abs {
		return abs, nil
	}
	parent, err := realPath(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, filepath.Base(abs)), nil
}

// Files returns the SIP files below the OS path p (a folder or one file)
// at this revision, with paths spelled as p spells them. A path that did
// not exist at the revision has no files.
func (r *Revision) Files(p string) ([]registry.File, error) {
	abs, err := realPath(p)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(r.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s is outside the repository at %s", p, r.root)
	}
	rel = filepath.ToSlash(rel)
	tree, err := r.commit.Tree()
	if err != nil {
		return nil, err
	}
	if rel != "." {
		if f, err := tree.File(rel); err == nil {
			content, err := read(f)
			if err != nil {
				return nil, err
			}
			return []registry.File{{Path: p, Content: content}}, nil
		}
		sub, err := tree.Tree(rel)
		if errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrFileNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		tree = sub
	}
	var files []registry.File
	err = tree.Files().ForEach(func(f *object.File) error {
		if !registry.IsSIPFile(f.Name) || hidden(f.Name) || !f.Mode.IsFile() {
			return nil
		}
		content, err := read(f)
		if err != nil {
			return err
		}
		files = append(files, registry.File{Path: joinDisplay(p, f.Name), Content: content})
		return nil
	})
	return files, err
}

func hidden(name string) bool {
	for _, part := range strings.Split(path.Dir(name), "/") {
		if strings.HasPrefix(part, ".") && part != "." {
			return true
		}
	}
	return false
}

func joinDisplay(prefix, name string) string {
	if prefix == "." || prefix == "" {
		return name
	}
	return strings.TrimSuffix(filepath.ToSlash(prefix), "/") + "/" + name
}

func read(f *object.File) ([]byte, error) {
	rd, err := f.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(io.LimitReader(rd, registry.MaxFileSize+1))
}

// ReadFile reads a file of the revision by its path from the repository's
// root (e.g. ".github/sip.yml"); found is false when it has none.
func (r *Revision) ReadFile(name string) (content []byte, found bool, err error) {
	tree, err := r.commit.Tree()
	if err != nil {
		return nil, false, err
	}
	f, err := tree.File(name)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	content, err = read(f)
	return content, err == nil, err
}

// Root is the root of the repository's work tree.
func (r *Revision) Root() string { return r.root }
