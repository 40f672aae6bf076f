package registry

import (
	"path"
	"strconv"
	"strings"
)

// DefaultDir is the folder of a repository that holds its SIPs.
const DefaultDir = "evaluations"

// The layout of a SIP folder, decided here for every consumer (validation,
// sync, the App's staleness and number checks, the preview and sip new):
// a SIP is the file DIR/SIP-<N>.md, directly in the folder. Every other
// Markdown file below the folder, in a subfolder or under another name, is
// still read, so that validation refuses it (file-location,
// file-name-mismatch) instead of letting it through unchecked; READMEs and
// hidden files are not read.

// Reads reports whether validation and sync read the repository file name
// for the SIP folder dir: any Markdown file below dir, at any depth, except
// READMEs and hidden files. A change to any of them after an approval
// makes the approval stale.
func Reads(dir, name string) bool {
	if !strings.HasPrefix(name, dir+"/") || !IsSIPFile(name) {
		return false
	}
	for _, part := range strings.Split(strings.TrimPrefix(name, dir+"/"), "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// Placed reports whether a file that is read lies where a SIP belongs:
// directly in the folder dir.
func Placed(dir, name string) bool { return path.Dir(name) == path.Clean(dir) }

// NumberOf reads N from a file at dir/SIP-N.md (the canonical spelling,
// as FileName writes it).
func NumberOf(dir, name string) (int, bool) {
	if !Placed(dir, name) {
		return 0, false
	}
	base := path.Base(name)
	digits, ok := strings.CutPrefix(strings.TrimSuffix(base, ".md"), "SIP-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n <= 0 || FileName(n) != base {
		return 0, false
	}
	return n, true
}
