package registry

import (
	"regexp"
	"testing"
)

// fastPathCases are strings the fast paths must treat as the general
// ones do: every ASCII character, words, numbers, punctuation, runs of
// separators.
var fastPathCases = func() []string {
	var all []byte
	for c := byte(1); c < 0x80; c++ {
		all = append(all, c)
	}
	return []string{"", " ", "Abstract", "3. Procedure (Proctor Script)", "2.1 How it runs", "1 2 3", "12", "1a 2",
		"Passing Score:", "  --  ", "A_b-C d\te", "x--y", "-x", "x-", "a_b", "a__b", "_a", "ab-12-cd", "AB", "a-B",
		"a\x00b", "v1.2.3", "10. 20. thirty", "Émile's café", string(all)}
}()

func TestHeadingKeyASCII(t *testing.T) {
	t.Parallel()
	for _, s := range fastPathCases {
		got, ok := headingKeyASCII(s)
		if want := headingKeyUnicode(s); ok && got != want {
			t.Errorf("headingKeyASCII(%q) = %q, want %q", s, got, want)
		}
	}
}

var (
	idShapeRE     = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	moduleShapeRE = regexp.MustCompile(`^[a-z0-9]+([_-][a-z0-9]+)*$`)
)

func TestIsSlugMatchesItsExpressions(t *testing.T) {
	t.Parallel()
	for _, s := range fastPathCases {
		if got, want := isSlug(s, false), idShapeRE.MatchString(s); got != want {
			t.Errorf("isSlug(%q, false) = %v, want %v", s, got, want)
		}
		if got, want := isSlug(s, true), moduleShapeRE.MatchString(s); got != want {
			t.Errorf("isSlug(%q, true) = %v, want %v", s, got, want)
		}
	}
}

// closestUnpruned is closest measuring every candidate.
func closestUnpruned(s string, candidates []string) (string, int) {
	ns := normalizeName(nil, s)
	best, bestDist := "", len(s)/3+2
	for _, c := range candidates {
		nc := normalizeName(nil, c)
		if string(nc) == string(ns) {
			return c, 0
		}
		if d := levenshtein(ns, nc); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist
}

func TestClosestSkipsOnlyWhatCannotWin(t *testing.T) {
	t.Parallel()
	candidates := []string{"time_limit_minutes", "passing_score", "prompts", "id", "a", "prerequisites", "adapted-from", "max_attempts", "x_y_z_w_v"}
	for _, s := range append(fastPathCases, candidates...) {
		for _, s := range []string{s, s + "x", "time_limit_minute", "passing_socre", "prompt", "i", "ab"} {
			gb, gd := closest(s, candidates)
			wb, wd := closestUnpruned(s, candidates)
			if gb != wb || gd != wd {
				t.Errorf("closest(%q) = %q, %d; want %q, %d", s, gb, gd, wb, wd)
			}
		}
	}
}

func FuzzFastPaths(f *testing.F) {
	for _, s := range fastPathCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, ok := headingKeyASCII(s); ok && got != headingKeyUnicode(s) {
			t.Errorf("headingKeyASCII(%q) = %q, want %q", s, got, headingKeyUnicode(s))
		}
		if isSlug(s, false) != idShapeRE.MatchString(s) || isSlug(s, true) != moduleShapeRE.MatchString(s) {
			t.Errorf("isSlug(%q) differs from its expressions", s)
		}
		gb, gd := closest(s, fastPathCases)
		wb, wd := closestUnpruned(s, fastPathCases)
		if gb != wb || gd != wd {
			t.Errorf("closest(%q) = %q, %d; want %q, %d", s, gb, gd, wb, wd)
		}
	})
}
