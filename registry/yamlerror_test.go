package registry_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

// TestYAMLSyntaxPositions checks that each kind of YAML syntax error is
// reported at the line and column of the character it is about (lines
// count the opening ---, so the frontmatter starts at line 2).
func TestYAMLSyntaxPositions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		yaml       string
		line, col  int
		msgContain string
	}{
		{"tab in indentation", "sip: 2\nid: x\nconfig:\n  a: 1\n\tb: 2\n", 6, 1, "tab"},
		{"tab before the first key of a block", "sip: 2\nid: x\n\tname: y\n", 4, 1, "tab"},
		{"tab before a list item", "sip: 2\nprerequisites:\n\t- poaw\n", 4, 1, ""},
		{"unclosed bracket", "sip: 2\nid: x\nprerequisites: [poaw, identity\nname: y\nmodule: z\n", 4, 16, "','"},
		{"unclosed brace", "sip: 2\nexecutable: {handler: poaw_handler\nname: y\n", 3, 13, "'}'"},
		{"unclosed double quote, closed later", "sip: 2\nid: x\nname: \"Proof of work\nmodule: core\nauthor: \"Ada\"\nstatus: draft\n", 4, 7, ""},
		{"unclosed double quote at the end", "sip: 2\nid: x\nname: \"Proof of work\nmodule: core\n", 4, 7, ""},
		{"unclosed single quote", "sip: 2\nname: 'Proof of work\nmodule: core\nauthor: 'Ada'\n", 3, 7, ""},
		{"key indented too little", "sip: 2\nconfig:\n  a: 1\n b: 2\nname: x\n", 5, 2, "expected key"},
		{"list item indented too little", "sip: 2\nprerequisites:\n  - a\n - b\n", 5, 2, ""},
		{"list item among keys", "sip: 2\n- poaw\nname: x\n", 3, 1, ""},
		{"key among list items", "prerequisites:\n  - a\n  name: x\n", 4, 3, ""},
		{"key indented under a plain value", "sip: 2\nname: x\n  id: y\n", 4, 5, "mapping values"},
		{"two colons on a line", "sip: 2\nname: PoAW: Proof of work\n", 3, 11, "mapping values"},
		{"two colons on the first line", "name: PoAW: Proof\n", 2, 11, "mapping values"},
		{"invalid escape", "sip: 2\n\nname: \"a \\q b\"\n", 4, 10, "escape"},
		{"reserved character", "sip: 2\nname: @ada\n", 3, 7, "cannot start any token"},
		{"backtick", "sip: 2\nname: `ada`\n", 3, 7, "cannot start any token"},
		{"duplicate key", "sip: 2\nid: x\nsip: 3\n", 4, 1, "defined twice"},
		{"duplicate nested key", "sip: 2\nexecutable:\n  handler: a\n  handler: b\n", 5, 3, "defined twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := registry.Parse("evaluations/SIP-2.md", []byte("---\n"+tc.yaml+"---\n\n# Body\n"))
			var found []registry.Problem
			for _, p := range doc.Problems {
				if p.Rule == "yaml-syntax" {
					found = append(found, p)
				}
			}
			if len(found) == 0 {
				t.Fatalf("no yaml-syntax problem; got %v", doc.Problems)
			}
			p := found[0]
			if p.Line != tc.line || p.Column != tc.col {
				t.Errorf("at %d:%d, want %d:%d (%s)", p.Line, p.Column, tc.line, tc.col, p.Message)
			}
			if !strings.Contains(p.Message, tc.msgContain) {
				t.Errorf("message %q does not contain %q", p.Message, tc.msgContain)
			}
		})
	}
}
