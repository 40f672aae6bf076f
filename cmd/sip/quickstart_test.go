package main

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

var poawScript = regexp.MustCompile(`(?s)<pre><code id="poaw-script">(.*?)</code></pre>`)

// TestQuickstartScript runs the quickstart's Proof of Agentic Work script,
// exactly as the page shows it, against the server `make run` starts: it
// must pass inside the challenge's 15 seconds. .ci/run installs the tools
// it needs; without them the test fails under CI and skips elsewhere.
func TestQuickstartScript(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq", "cut"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("the quickstart script needs %s: .ci/run installs it", tool)
			}
			t.Skipf("SKIPPED: the quickstart script needs %s, which is not installed", tool)
		}
	}
	if _, err := exec.LookPath("sha256sum"); err != nil {
		if _, err := exec.LookPath("shasum"); err != nil {
			t.Skip("SKIPPED: the quickstart script needs sha256sum or shasum")
		}
	}
	m := MustRunMain(t, &Main{})
	resp, err := http.Get(m.URL + "/docs/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("quickstart: %d %v", resp.StatusCode, err)
	}
	found := poawScript.FindSubmatch(page)
	if found == nil {
		t.Fatal(`the quickstart has no <pre><code id="poaw-script">`)
	}
	script := html.UnescapeString(string(found[1]))

	// Pasted into whichever shell the reader has: each that is installed
	// (bash always, as the script runs in it) runs the text as it is.
	for _, shell := range []string{"bash", "sh", "zsh"} {
		if _, err := exec.LookPath(shell); err != nil {
			t.Logf("%s is not installed; the script is not tried in it", shell)
			continue
		}
		t.Run(shell, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.CommandContext(t.Context(), shell, "-c", script)
			cmd.Dir = dir
			// The page's own address, not the caller's; a name per run.
			cmd.Env = append(os.Environ(), "SIP=", "NAME=quickstart-"+shell)
			began := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(began)
			if err != nil {
				t.Fatalf("the script failed after %v: %v\n%s", took, err, out)
			}
			t.Logf("the script took %v:\n%s", took, out)

			var result struct {
				Result struct {
					Outcome      string  `json:"outcome"`
					Passed       bool    `json:"passed"`
					EvaluationID string  `json:"evaluation_id"`
					PointsEarned float64 `json:"points_earned"`
				} `json:"result"`
			}
			raw, err := os.ReadFile(filepath.Join(dir, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &result); err != nil {
				t.Fatalf("result.json: %v\n%s", err, raw)
			}
			if r := result.Result; r.Outcome != "passed" || !r.Passed || r.EvaluationID != "poaw" || r.PointsEarned <= 0 {
				t.Errorf("result %+v; want a passed poaw with points\n%s", r, out)
			}
		})
	}
}
