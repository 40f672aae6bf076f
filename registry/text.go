package registry

import (
	"strconv"
	"strings"
	"time"
)

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// timeLayout prints a date as it was probably written: date only when it
// falls on midnight UTC.
func timeLayout(t time.Time) string {
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return time.DateOnly
	}
	return time.RFC3339
}

// withArticle puts "a" or "an" before a word, by how it is spoken: an
// agent_certification SIP, a simple_pass_fail SIP, an HTTP link.
func withArticle(word string) string {
	w := strings.ToLower(word)
	switch {
	case w == "":
		return word
	case strings.HasPrefix(w, "uni"), strings.HasPrefix(w, "use"), strings.HasPrefix(w, "one"):
		return "a " + word
	case strings.ContainsRune("aeiou", rune(w[0])):
		return "an " + word
	}
	return "a " + word
}
