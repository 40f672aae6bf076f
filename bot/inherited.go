package bot

import (
	"slices"

	"github.com/sipregistry/sip/registry"
)

// problemKey identifies a problem across two validations of one file.
type problemKey struct {
	path, rule, message string
	line, column        int
}

func keyOf(p registry.Problem) problemKey {
	return problemKey{p.Path, p.Rule, p.Message, p.Line, p.Column}
}

// splitInherited separates the problems of a pull request as it would
// merge into the pull request's own and those it inherits: a problem is
// inherited when it is in a file the pull request does not change and
// the base branch has it already. Everything else is the pull request's,
// including problems it causes in files it does not touch (a dependant
// of a prerequisite it edited, a number it duplicates).
func splitInherited(merged, onBase []registry.Problem, touched []string) (own, inherited []registry.Problem) {
	before := make(map[problemKey]bool, len(onBase))
	for _, p := range onBase {
		before[keyOf(p)] = true
	}
	for _, p := range merged {
		if before[keyOf(p)] && !slices.Contains(touched, p.Path) {
			inherited = append(inherited, p)
		} else {
			own = append(own, p)
		}
	}
	return own, inherited
}
