package siptest

import (
	"fmt"
	"strings"

	"github.com/sipregistry/sip/registry"
)

// SIP returns a small valid SIP file evaluations/SIP-<n>.md: an identity
// check with the given id, status and prerequisites, at version 1.0.0,
// updated 2026-01-01.
func SIP(n int, id, status string, prereqs ...string) registry.File {
	var pre string
	if len(prereqs) > 0 {
		pre = "prerequisites: [" + strings.Join(prereqs, ", ") + "]\n"
	}
	content := fmt.Sprintf(`---
sip: %d
id: %s
name: "Evaluation %s"
module: core
type: simple_pass_fail
status: %s
%sauthor: Ada
created_at: 2026-01-01
updated_at: 2026-01-01
version: "1.0.0"
points: %d
executable:
  handler: identity_check_handler
---

# Evaluation %s

## How it runs

Submit a non-empty IDENTITY.md.

## Passing

Any non-empty file passes.
`, n, id, id, status, pre, n, id)
	return registry.File{Path: fmt.Sprintf("evaluations/SIP-%d.md", n), Content: []byte(content)}
}

// Edit returns f with its body extended by note, version set and
// updated_at moved to updated: a well-formed change of a merged SIP.
func Edit(f registry.File, version, updated, note string) registry.File {
	s := string(f.Content)
	s = replaceLine(s, "version: ", `version: "`+version+`"`)
	s = replaceLine(s, "updated_at: ", "updated_at: "+updated)
	return registry.File{Path: f.Path, Content: []byte(s + "\n" + note + "\n")}
}

// Set replaces the line that starts with prefix (e.g. "status: ").
func Set(f registry.File, prefix, line string) registry.File {
	return registry.File{Path: f.Path, Content: []byte(replaceLine(string(f.Content), prefix, line))}
}

func replaceLine(s, prefix, line string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			lines[i] = line
			break
		}
	}
	return strings.Join(lines, "\n")
}
