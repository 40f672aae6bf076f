package registry

import "strings"

// suggest returns the candidate closest to s, or "" when none is close
// enough to be a likely typo. Case, hyphens and underscores are ignored
// first, so adapted_from finds adapted-from.
func suggest(s string, candidates []string) string {
	norm := func(x string) string {
		return strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(x))
	}
	ns := norm(s)
	best, bestDist := "", len(s)/3+2
	for _, c := range candidates {
		if norm(c) == ns {
			return c
		}
		if d := levenshtein(ns, norm(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return max(len(ra), len(rb))
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Suggest returns the candidate closest to s, or "" when none is close
// enough to be a likely typo: the one spelling check of every message
// that says "did you mean".
func Suggest(s string, candidates []string) string { return suggest(s, candidates) }
