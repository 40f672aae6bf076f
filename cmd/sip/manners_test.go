package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHelpOnceOnStdout: every command's help, as `sip CMD --help` and as
// `sip help CMD`, goes to standard output once, exits 0, and lists its
// flags with their defaults.
func TestHelpOnceOnStdout(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			for _, args := range [][]string{{c.name, "--help"}, {"help", c.name}} {
				code, out, errOut := runSip(t, args...)
				if code != exitOK || errOut != "" || out == "" {
					t.Errorf("sip %s: exit %d, stdout %d bytes, stderr %q", strings.Join(args, " "), code, len(out), errOut)
				}
				if strings.Count(out, "Usage: ") > 1 && c.name != "version" {
					t.Errorf("sip %s prints its usage %d times", strings.Join(args, " "), strings.Count(out, "Usage: "))
				}
				if c.name != "version" && c.name != "verify" && strings.Contains(out, "Flags") && !strings.Contains(out, "  -") {
					t.Errorf("sip %s announces flags but lists none:\n%s", strings.Join(args, " "), out)
				}
			}
		})
	}
}

func TestVersionAndUnknownCommands(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"--version", "-v", "version"} {
		if code, out, _ := runSip(t, v); code != exitOK || !strings.HasPrefix(out, "sip ") {
			t.Errorf("sip %s: exit %d %q", v, code, out)
		}
	}
	if code, _, errOut := runSip(t, "valdate"); code != exitUsage || !strings.Contains(errOut, `did you mean "validate"?`) {
		t.Errorf("a misspelt command: exit %d %q", code, errOut)
	}
	if code, out, errOut := runSip(t, "validate", "--bogus"); code != exitUsage || out != "" || !strings.Contains(errOut, "-bogus") {
		t.Errorf("an unknown flag: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestJSONErrorsAreJSON: with --format json, a failure is one JSON object
// on standard output that names the next step.
func TestJSONErrorsAreJSON(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"validate", "--format", "json", "does-not-exist"},
		{"validate", "--format", "json", "--base", "no-such-rev", bundled},
		{"validate", "--format", "json", "--config", "no-such-file.yml", bundled},
	} {
		code, out, errOut := runSip(t, args...)
		var e struct {
			Error    string `json:"error"`
			Hint     string `json:"hint"`
			ExitCode int    `json:"exit_code"`
		}
		if err := json.Unmarshal([]byte(out), &e); err != nil || e.Error == "" || e.Hint == "" || e.ExitCode != code || code == exitOK || errOut != "" {
			t.Errorf("sip %s: exit %d, stdout %q (%v), stderr %q", strings.Join(args, " "), code, out, err, errOut)
		}
	}
}
