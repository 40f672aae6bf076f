package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

func TestListRules(t *testing.T) {
	t.Parallel()
	code, out, _ := runSip(t, "validate", "--list-rules")
	if code != exitOK || !strings.HasPrefix(out, "RULE") || strings.Count(out, "\n") < len(registry.Rules)+1 {
		t.Fatalf("--list-rules: %d\n%s", code, out)
	}
	for _, r := range registry.Rules {
		if !strings.Contains(out, r.ID+" ") {
			t.Errorf("the list lacks %s", r.ID)
		}
	}
	code, out, _ = runSip(t, "validate", "--list-rules", "--format", "json")
	var rules []struct{ ID, Severity, Scope, Requires, Fix, Docs string }
	if err := json.Unmarshal([]byte(out), &rules); code != exitOK || err != nil || len(rules) != len(registry.Rules) ||
		rules[0].ID != registry.Rules[0].ID || rules[0].Fix == "" || !strings.HasSuffix(rules[0].Docs, "#"+rules[0].ID) {
		t.Errorf("--list-rules --format json: %d %v %+v", code, err, rules)
	}
	if code, _, errOut := runSip(t, "validate", "--list-rules", "evaluations"); code != exitUsage || !strings.Contains(errOut, "takes no paths") {
		t.Errorf("--list-rules with a path: %d %q", code, errOut)
	}
}

// TestTextDiagnostics: the text format shows the source line, a caret
// under the column and the hint; colour only when asked, never with
// NO_COLOR in auto, and never when the output is not a terminal.
func TestTextDiagnostics(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "evaluations")
	os.MkdirAll(dir, 0o755)
	b, _ := os.ReadFile(filepath.Join(bundled, "SIP-3.md"))
	os.WriteFile(filepath.Join(dir, "SIP-3.md"), bytes.Replace(b, []byte("id: identity-check"), []byte("id: Identity_Check"), 1), 0o644)
	runWith := func(getenv func(string) string, args ...string) string {
		var out bytes.Buffer
		run(context.Background(), env{stdout: &out, stderr: &bytes.Buffer{}, getenv: getenv}, args)
		return out.String()
	}
	none := func(string) string { return "" }
	noColor := func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}
	plain := runWith(none, "validate", dir)
	for _, want := range []string{"SIP-3.md:3:5: error [id-format]", " 3 | id: Identity_Check\n   |     ^\n", "   = help: "} {
		if !strings.Contains(plain, want) {
			t.Errorf("text output lacks %q:\n%s", want, plain)
		}
	}
	for _, tt := range []struct {
		name   string
		getenv func(string) string
		args   []string
		color  bool
	}{
		{"auto, not a terminal", none, nil, false},
		{"never", none, []string{"--color", "never"}, false},
		{"always", none, []string{"--color", "always"}, true},
		{"always beats NO_COLOR", noColor, []string{"--color", "always"}, true},
		{"auto with NO_COLOR", noColor, []string{"--color", "auto"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := runWith(tt.getenv, append(append([]string{"validate"}, tt.args...), dir)...)
			if got := strings.Contains(out, "\x1b["); got != tt.color {
				t.Errorf("colour %v, want %v:\n%q", got, tt.color, out)
			}
		})
	}
	if code, _, errOut := runSip(t, "validate", "--color", "sometimes", dir); code != exitUsage || !strings.Contains(errOut, "--color") {
		t.Errorf("--color sometimes: %d %q", code, errOut)
	}
}
