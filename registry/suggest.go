package registry

// suggest returns the candidate closest to s, or "" when none is close
// enough to be a likely typo. Case, hyphens and underscores are ignored
// first, so adapted_from finds adapted-from.
func suggest(s string, candidates []string) string {
	best, _ := closest(s, candidates)
	return best
}

// typoDistance is the largest edit distance (after normalising) at which
// an unknown key is taken for a misspelt known one: time_limit_minute for
// time_limit_minutes, passing_socre for passing_score.
const typoDistance = 2

// closest returns the candidate closest to s and its edit distance after
// normalising both, or "" when none is close enough to be a likely typo.
func closest(s string, candidates []string) (string, int) {
	var buf [2][64]byte
	ns := normalizeName(buf[0][:0], s)
	best, bestDist := "", len(s)/3+2
	for _, c := range candidates {
		nc := normalizeName(buf[1][:0], c)
		if string(nc) == string(ns) {
			return c, 0
		}
		// The distance is at least the difference in length: a
		// candidate that cannot come closer is not measured.
		if abs(len(ns)-len(nc)) >= bestDist {
			continue
		}
		if d := levenshtein(ns, nc); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// normalizeName appends s to dst in lower case without hyphens,
// underscores and spaces; it allocates only for names longer than dst's
// capacity.
func normalizeName(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' || c == '_' || c == ' ':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// levenshtein is the edit distance of a and b in bytes (names are ASCII;
// other text only costs a little precision).
func levenshtein(a, b []byte) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b))
	}
	var rows [2][65]int
	prev, cur := rows[0][:len(b)+1], rows[1][:len(b)+1]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Suggest returns the candidate closest to s, or "" when none is close
// enough to be a likely typo: the one spelling check of every message
// that says "did you mean".
func Suggest(s string, candidates []string) string { return suggest(s, candidates) }
