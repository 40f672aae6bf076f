package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sipregistry/sip/registry/siptest"
)

// runSip runs the command in-process and returns its exit code and output.
func runSip(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), env{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}, args)
	return code, out.String(), errOut.String()
}

const bundled = "../../evaluations"
const corpus = "../../registry/testdata/safemolt/evaluations"

func TestValidateExitCodes(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	loose := t.TempDir() // SIPs outside any git repository
	if b, err := os.ReadFile(filepath.Join(bundled, "SIP-2.md")); err != nil || os.WriteFile(filepath.Join(loose, "SIP-2.md"), b, 0o644) != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		out  string // substring of stdout+stderr
	}{
		{"bundled SIPs are valid", []string{"validate", bundled}, exitOK, "8 files, 0 errors, 0 warnings"},
		{"one file", []string{"validate", bundled + "/SIP-2.md"}, exitOK, "1 file, 0 errors"},
		{"corpus has errors", []string{"validate", corpus}, exitData, "SIP-7.md:179:3: error [config-invalid] rubric max_score values sum to 105, not 100"},
		{"flags after paths", []string{"validate", corpus, "--format", "json"}, exitData, `"rule": "handler-unknown"`},
		{"quiet", []string{"validate", "--quiet", corpus}, exitData, "warnings not shown: --quiet"},
		{"verbose", []string{"validate", "--verbose", "../../registry/testdata/safemolt"}, exitData, "[config-deprecated]"},
		{"missing path", []string{"validate", "no/such/dir"}, exitNoInput, "does not exist"},
		{"folder without SIPs", []string{"validate", empty}, exitNoInput, "holds no SIP"},
		{"unknown format", []string{"validate", "--format", "xml", bundled}, exitUsage, "unknown --format"},
		{"unknown flag", []string{"validate", "--frobnicate", bundled}, exitUsage, "flag provided but not defined"},
		{"base outside a repository", []string{"validate", "--base", "HEAD", loose}, exitConfig, "not inside a git repository"},
		{"help", []string{"validate", "--help"}, exitOK, "Exit status"},
		{"no command", nil, exitUsage, "Usage: sip"},
		{"unknown command", []string{"frob"}, exitUsage, `unknown command "frob"`},
		{"top-level help", []string{"--help"}, exitOK, "validate"},
		{"version", []string{"version"}, exitOK, "sip "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runSip(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			if !strings.Contains(out+errOut, tt.out) {
				t.Errorf("output lacks %q:\n%s%s", tt.out, out, errOut)
			}
		})
	}
}

func TestValidateJSONShape(t *testing.T) {
	t.Parallel()
	_, out, _ := runSip(t, "validate", "--format=json", corpus)
	var got struct {
		Files    int `json:"files"`
		Errors   int `json:"errors"`
		Warnings int `json:"warnings"`
		Problems []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Files != 16 || got.Errors == 0 || len(got.Problems) != got.Errors+got.Warnings {
		t.Errorf("files %d errors %d warnings %d problems %d", got.Files, got.Errors, got.Warnings, len(got.Problems))
	}
	for _, key := range []string{"path", "line", "column", "end_line", "severity", "rule", "message", "hint"} {
		if _, ok := got.Problems[0][key]; !ok {
			t.Errorf("problem lacks %q: %v", key, got.Problems[0])
		}
	}
}

func TestValidateGitHubFormat(t *testing.T) {
	t.Parallel()
	_, out, _ := runSip(t, "validate", "--format", "github", corpus)
	if !strings.Contains(out, "::error file=../../registry/testdata/safemolt/evaluations/SIP-7.md,line=179,") {
		t.Errorf("no workflow command for SIP-7:\n%s", out)
	}
}

func TestValidateBase(t *testing.T) {
	t.Parallel()
	sip2, _ := os.ReadFile(filepath.Join(bundled, "SIP-2.md"))
	sip3, _ := os.ReadFile(filepath.Join(bundled, "SIP-3.md"))
	dir := siptest.NewRepo(t, map[string]string{
		"evaluations/SIP-2.md": string(sip2),
		"evaluations/SIP-3.md": string(sip3),
	})
	evals := filepath.Join(dir, "evaluations")
	if code, out, errOut := runSip(t, "validate", "--base", "HEAD", evals); code != exitOK {
		t.Fatalf("unchanged tree: exit %d\n%s%s", code, out, errOut)
	}
	// Edit SIP-2 without raising its version, and delete SIP-3.
	siptest.WriteFiles(t, dir, map[string]string{
		"evaluations/SIP-2.md": strings.Replace(string(sip2), "within 15\nseconds.", "within 15 seconds, or fail.", 1) + "\nMore.\n",
		"evaluations/SIP-3.md": "",
	})
	code, out, _ := runSip(t, "validate", evals, "--base", "main")
	if code != exitData {
		t.Fatalf("exit %d, want %d\n%s", code, exitData, out)
	}
	for _, want := range []string{"[version-not-bumped]", "[updated-at-not-advanced]", "SIP-3.md:1:1: error [sip-deleted]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	// The edited file alone gets its edit rules too, and nothing about
	// the deleted one it was not asked about.
	code, out, _ = runSip(t, "validate", filepath.Join(evals, "SIP-2.md"), "--base", "main")
	if code != exitData || !strings.Contains(out, "[version-not-bumped]") || strings.Contains(out, "[sip-deleted]") {
		t.Errorf("one file: exit %d, want %d with version-not-bumped and no sip-deleted\n%s", code, exitData, out)
	}
	if code, _, errOut := runSip(t, "validate", "--base", "nope", evals); code != exitConfig || !strings.Contains(errOut, "unknown revision") {
		t.Errorf("unknown revision: exit %d, %s", code, errOut)
	}
}

// copyBundled copies the bundled SIPs into a fresh folder.
func copyBundled(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	names, _ := filepath.Glob(filepath.Join(bundled, "*.md"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(n)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestNewWritesValidSIPs(t *testing.T) {
	t.Parallel()
	dir := copyBundled(t)
	for i, typ := range typeList() {
		code, out, errOut := runSip(t, "new", "--name", "Test "+typ+" #1: \"quoted\"", "--type", typ, "--dir", dir, "--author", "Ada")
		want := filepath.Join(dir, fmt.Sprintf("SIP-%d.md", 9+i))
		if code != exitOK || strings.TrimSpace(out) != want {
			t.Fatalf("%s: exit %d, out %q, want %s\n%s", typ, code, out, want, errOut)
		}
	}
	if code, out, _ := runSip(t, "validate", dir); code != exitOK || !strings.Contains(out, "0 errors, 0 warnings") {
		t.Errorf("new SIPs do not validate: exit %d\n%s", code, out)
	}
	if code, _, errOut := runSip(t, "new", "--name", "Proof of Agentic Work", "--type", "simple_pass_fail", "--id", "poaw", "--dir", dir); code != exitData || !strings.Contains(errOut, "already used") {
		t.Errorf("taken id: exit %d, %s", code, errOut)
	}
	for _, args := range [][]string{
		{"new", "--type", "process", "--dir", dir},
		{"new", "--name", "x", "--dir", dir},
		{"new", "--name", "x", "--type", "quiz", "--dir", dir},
		{"new", "--name", "x", "--type", "proctored", "--handler", "poaw_handler", "--dir", dir},
	} {
		if code, _, _ := runSip(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, _ := runSip(t, "new", "--name", "x", "--type", "process", "--dir", filepath.Join(dir, "missing")); code != exitNoInput {
		t.Errorf("missing dir: exit %d, want %d", code, exitNoInput)
	}
}

func TestNewConcurrentRunsTakeDistinctNumbers(t *testing.T) {
	t.Parallel()
	dir := copyBundled(t)
	const n = 8
	var wg sync.WaitGroup
	paths := make([]string, n)
	for i := range n {
		wg.Go(func() {
			code, out, errOut := runSip(t, "new", "--name", fmt.Sprintf("Parallel %d", i), "--type", "proctored", "--dir", dir, "--author", "Ada")
			if code != exitOK {
				t.Errorf("exit %d: %s", code, errOut)
			}
			paths[i] = strings.TrimSpace(out)
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			t.Errorf("two runs wrote %s", p)
		}
		seen[p] = true
	}
	if code, out, _ := runSip(t, "validate", dir); code != exitOK {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestIndexIsCurrent(t *testing.T) {
	t.Parallel()
	if code, _, errOut := runSip(t, "index", "--check", bundled); code != exitOK {
		t.Fatalf("evaluations/README.md is stale (run make index): %s", errOut)
	}
	dir := copyBundled(t)
	os.Remove(filepath.Join(dir, "README.md"))
	if code, _, _ := runSip(t, "index", "--check", dir); code != exitData {
		t.Errorf("a folder without README.md must fail --check")
	}
	if code, _, _ := runSip(t, "index", dir); code != exitOK {
		t.Errorf("index failed")
	}
	got, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	want, _ := os.ReadFile(filepath.Join(bundled, "README.md"))
	if !bytes.Equal(got, want) {
		t.Errorf("index of a copy differs from the bundled README.md")
	}
}
