package githubtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// gitRepo is a repository on disk that the fake serves over git's smart
// HTTP protocol (git http-backend) and reads with the git CLI.
type gitRepo struct {
	dir string // a work tree; git http-backend serves dir/.git
}

func newGitRepo(t testing.TB, dir, defaultBranch string) *gitRepo {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &gitRepo{dir: dir}
	g.must(t, "init", "-q", "-b", defaultBranch)
	// The App fetches single commits by SHA, as it does from GitHub.
	g.must(t, "config", "uploadpack.allowAnySHA1InWant", "true")
	g.must(t, "config", "uploadpack.allowReachableSHA1InWant", "true")
	g.must(t, "config", "http.uploadpack", "true")
	return g
}

func (g *gitRepo) git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Fake", "GIT_AUTHOR_EMAIL=fake@example.com",
		"GIT_COMMITTER_NAME=Fake", "GIT_COMMITTER_EMAIL=fake@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+g.dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func (g *gitRepo) must(t testing.TB, args ...string) string {
	t.Helper()
	out, err := g.git(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// commit writes files on branch (created from `from` when new; an empty
// content deletes the file) and returns the new commit.
func (g *gitRepo) commit(t testing.TB, branch, from string, files map[string]string, msg string) string {
	t.Helper()
	if _, err := g.git("rev-parse", "--verify", "-q", "refs/heads/"+branch); err == nil {
		g.must(t, "checkout", "-q", branch)
	} else if from != "" {
		g.must(t, "checkout", "-q", "-b", branch, from)
	} else {
		g.must(t, "checkout", "-q", "--orphan", branch)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(g.dir, filepath.FromSlash(name))
		if files[name] == "" {
			os.Remove(p)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g.must(t, "add", "-A")
	g.must(t, "commit", "-q", "--allow-empty", "-m", msg)
	return g.must(t, "rev-parse", "HEAD")
}

func (g *gitRepo) head(branch string) string {
	sha, _ := g.git("rev-parse", "refs/heads/"+branch)
	return sha
}

// changedFile is one entry of a diff in the shape of GitHub's file lists,
// with the blob of the file after the change.
type changedFile struct {
	Filename         string `json:"filename"`
	PreviousFilename string `json:"previous_filename,omitempty"`
	Status           string `json:"status"`
	SHA              string `json:"sha"`
}

// diff lists the files that differ between two commits.
func (g *gitRepo) diff(from, to string) ([]changedFile, error) {
	out, err := g.git("diff", "--raw", "--no-abbrev", "-M", from, to)
	if err != nil || out == "" {
		return []changedFile{}, err
	}
	var files []changedFile
	for _, line := range strings.Split(out, "\n") {
		meta, names, _ := strings.Cut(line, "\t")
		m, f := strings.Fields(meta), strings.Split(names, "\t")
		if len(m) < 5 {
			continue
		}
		c := changedFile{Filename: f[len(f)-1], SHA: m[3]}
		switch kind := m[4]; {
		case kind == "A":
			c.Status = "added"
		case kind == "D":
			c.Status, c.SHA = "removed", "0000000000000000000000000000000000000000"
		case strings.HasPrefix(kind, "R"):
			c.Status, c.PreviousFilename = "renamed", f[0]
		default:
			c.Status = "modified"
		}
		files = append(files, c)
	}
	return files, nil
}

// compare gives the merge base of two commits and how far apart they are.
func (g *gitRepo) compare(base, head string) (mergeBase, status string, files []changedFile, err error) {
	if mergeBase, err = g.git("merge-base", base, head); err != nil {
		return "", "", nil, err
	}
	counts, err := g.git("rev-list", "--left-right", "--count", base+"..."+head)
	if err != nil {
		return "", "", nil, err
	}
	f := strings.Fields(counts)
	behind, _ := strconv.Atoi(f[0])
	ahead, _ := strconv.Atoi(f[1])
	switch {
	case ahead == 0 && behind == 0:
		status = "identical"
	case behind == 0:
		status = "ahead"
	case ahead == 0:
		status = "behind"
	default:
		status = "diverged"
	}
	files, err = g.diff(mergeBase, head)
	return mergeBase, status, files, err
}
