package registry

import (
	"bytes"
	"slices"
)

// MergeFiles merges two lines of work on one set of files, file by file:
// ours (the base branch now) and theirs (a pull request's head), both
// descended from base (their merge base). A file changed on one side
// only takes that side's content (or is deleted); a file changed on both
// sides to the same content takes it; a file changed on both sides
// differently is a conflict: listed by path, and merged with theirs. It
// is stricter than git, which may merge changes to different lines of
// one file: a SIP edited on both sides is worth a human's look.
func MergeFiles(base, ours, theirs []File) (merged []File, conflicts []string) {
	index := func(fs []File) map[string][]byte {
		m := make(map[string][]byte, len(fs))
		for _, f := range fs {
			m[f.Path] = f.Content
		}
		return m
	}
	b, o, t := index(base), index(ours), index(theirs)
	paths := map[string]bool{}
	for _, m := range []map[string][]byte{b, o, t} {
		for p := range m {
			paths[p] = true
		}
	}
	same := func(m1, m2 map[string][]byte, p string) bool {
		c1, ok1 := m1[p]
		c2, ok2 := m2[p]
		return ok1 == ok2 && bytes.Equal(c1, c2)
	}
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range paths {
			if !yield(p) {
				return
			}
		}
	}) {
		var from map[string][]byte
		switch {
		case same(b, t, p): // the pull request left it alone
			from = o
		case same(b, o, p), same(o, t, p): // only the pull request changed it, or both alike
			from = t
		default:
			// Listed, and merged as the pull request has it, so the rest
			// is checked as its author meant it.
			conflicts = append(conflicts, p)
			from = t
		}
		if c, ok := from[p]; ok {
			merged = append(merged, File{Path: p, Content: c})
		}
	}
	return merged, conflicts
}
