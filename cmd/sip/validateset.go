package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/sipregistry/sip/registry"
)

// validateSet is what one `sip validate` run reads: the files named, and
// around each the SIPs of its folder (the repository's SIP folder when it
// lies in one), so that every rule across files (duplicates,
// prerequisites, links to other SIPs) judges a file alone exactly as it
// judges it in its folder, and as CI does.
type validateSet struct {
	files []registry.File // every file read: named ones and their context
	named int             // how many files were named (the report's count)
	dir   string          // the SIP folder (Options.Dir), when there is one
	root  string          // the repository's root as a path like the files', or the folder read
	// reported keeps a problem when it is about a named file or lies
	// below a named folder (a deleted SIP, for the edit rules).
	files1  map[string]bool
	folders []string
	inRepo  bool
	// read are the folders read (named ones and the context of named
	// files): the edit rules read the same at the base revision.
	read []string
}

// readSet reads the named paths and their folders.
func readSet(paths []string) (*validateSet, error) {
	named, err := readPaths(paths)
	if err != nil {
		return nil, err
	}
	s := &validateSet{named: len(named), files1: map[string]bool{}}
	seen := map[string]bool{}
	add := func(fs []registry.File) {
		for _, f := range fs {
			if !seen[f.Path] {
				seen[f.Path] = true
				s.files = append(s.files, f)
			}
		}
	}
	add(named)
	for _, f := range named {
		s.files1[f.Path] = true
	}
	top, inRepo := repositoryRoot(paths[0])
	s.inRepo = inRepo
	var folders []string
	for _, p := range paths {
		p = filepath.ToSlash(filepath.Clean(p))
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			s.folders = append(s.folders, p)
			folders = append(folders, p)
			continue
		}
		dir := contextFolder(p, top, inRepo)
		folders = append(folders, dir)
		ctx, err := readPath(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading the SIPs next to %s: %w", p, err)
		}
		add(ctx)
	}
	s.read = slices.Compact(slices.Sorted(slices.Values(folders)))
	if len(s.read) == 1 {
		s.dir = s.read[0]
	}
	switch {
	case inRepo:
		s.root = top
	case len(folders) > 0:
		s.root = folders[0]
	}
	return s, nil
}

// contextFolder is the folder whose SIPs are read with the file p: the
// repository's SIP folder when p lies below it, else p's own folder.
func contextFolder(p, top string, inRepo bool) string {
	if inRepo {
		sips := path.Join(top, registry.DefaultDir)
		if strings.HasPrefix(p, sips+"/") || (top == "." && strings.HasPrefix(p, registry.DefaultDir+"/")) {
			return sips
		}
	}
	return path.Dir(p)
}

// repositoryRoot finds the git repository p lies in, as a path relative
// to the current folder (e.g. "." or "../.."), from the nearest .git.
func repositoryRoot(p string) (string, bool) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	for dir := abs; ; {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			wd, err := os.Getwd()
			if err != nil {
				return "", false
			}
			rel, err := filepath.Rel(wd, dir)
			if err != nil {
				return "", false
			}
			return filepath.ToSlash(rel), true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// hasContext says whether any file was read only as the context of a
// named one.
func (s *validateSet) hasContext() bool {
	for _, f := range s.files {
		if !s.reported(f.Path) {
			return true
		}
	}
	return false
}

// reported says whether the problems of the file at path are wanted:
// it was named, or lies in a folder that was.
func (s *validateSet) reported(path string) bool {
	if s.files1[path] {
		return true
	}
	for _, f := range s.folders {
		if f == "." || strings.HasPrefix(path, f+"/") {
			return true
		}
	}
	return false
}

// linkChecker says whether a linked path exists, inside the repository
// (or, outside one, the folder read); it counts the links it cannot
// judge, for one notice.
type linkChecker struct {
	root, rootAbs string
	inRepo        bool
	mu            sync.Mutex
	outside       map[string]bool
}

func (s *validateSet) linkChecker() *linkChecker {
	abs, _ := filepath.Abs(filepath.FromSlash(s.root))
	return &linkChecker{root: s.root, rootAbs: abs, inRepo: s.inRepo, outside: map[string]bool{}}
}

func (l *linkChecker) exists(p string) (exists, known bool) {
	abs, err := filepath.Abs(filepath.FromSlash(p))
	if err != nil {
		return false, false
	}
	if rel, err := filepath.Rel(l.rootAbs, abs); err != nil || !filepath.IsLocal(rel) && rel != "." {
		l.mu.Lock()
		l.outside[p] = true
		l.mu.Unlock()
		return false, false
	}
	_, err = os.Stat(abs)
	return err == nil, true
}

// notice says which links were not checked, if any: "2 linked paths lie
// outside the repository and were not checked: …".
func (l *linkChecker) notice() string {
	if len(l.outside) == 0 {
		return ""
	}
	where := "outside the repository"
	if !l.inRepo {
		where = "outside " + l.root + ", the folder read (it is in no git repository)"
	}
	links := slices.Sorted(maps.Keys(l.outside))
	list := strings.Join(links[:min(len(links), 3)], ", ")
	if len(links) > 3 {
		list += fmt.Sprintf(" and %d more", len(links)-3)
	}
	if len(links) == 1 {
		return fmt.Sprintf("1 linked path lies %s and was not checked: %s", where, list)
	}
	return fmt.Sprintf("%d linked paths lie %s and were not checked: %s", len(links), where, list)
}
