package registry

import (
	"regexp"
	"slices"
	"strings"
)

// handle is a GitHub @handle in an author field: not inside an email
// address, at most 39 characters, no leading or trailing hyphen.
var handle = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.+-])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?)\b`)

// Handles lists the GitHub logins an author field names as @handle, as
// in "Ada Lovelace (@ada), Grace Hopper (@grace)", each once. The
// approval policy lets them approve changes to their SIP; the App checks
// that each is a GitHub user (author-unknown).
func Handles(author string) []string {
	var out []string
	for _, m := range handle.FindAllStringSubmatch(author, -1) {
		if !slices.ContainsFunc(out, func(s string) bool { return strings.EqualFold(s, m[1]) }) {
			out = append(out, m[1])
		}
	}
	return out
}

// authorProblems reports the @handles of d's author field that users
// says are not GitHub users; handles users does not know are not judged.
func authorProblems(d *Document, users map[string]bool) []Problem {
	if d.SIP == nil || len(users) == 0 {
		return nil
	}
	var out []Problem
	for _, h := range Handles(d.SIP.Author) {
		if exists, known := users[strings.ToLower(h)]; known && !exists {
			out = append(out, problemAt(d, d.Span("author"), SeverityError, "author-unknown",
				"Write the author's GitHub login after @, e.g. `Ada Lovelace (@ada)`, or drop the @ for someone without one.",
				"author @%s is not a GitHub user", h))
		}
	}
	return out
}
