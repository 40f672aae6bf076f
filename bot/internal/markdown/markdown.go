// Package markdown holds the few helpers the App's Markdown (check run
// summaries, its comment, the policy's explanation) shares.
package markdown

import (
	"fmt"
	"strings"
)

// Cell makes s safe inside a table cell: pipes escaped, one line.
func Cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}

// Plural counts a word: "1 approval", "2 approvals".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
