package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

// TestValidateEndpointAgreesWithTheCLI: POST /api/v1/sips/validate
// reports, for a proposed file, the problems `sip validate` reports for
// the same file beside the registry's SIPs, rule for rule and line for
// line.
func TestValidateEndpointAgreesWithTheCLI(t *testing.T) {
	t.Parallel()
	m := MustRunMain(t, &Main{})
	sip2, err := os.ReadFile(filepath.Join(bundled, "SIP-2.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, draft := range map[string]string{
		"taken id, unknown prerequisite": strings.NewReplacer("sip: 2\n", "sip: 40\n", "prerequisites: []", "prerequisites: [poaw, nope]").Replace(string(sip2)),
		"broken YAML":                    "---\nsip: 40\nid: [unclosed\n---\n\n# x\n",
		"missing fields":                 "---\nsip: 40\nid: forty\n---\n\n# SIP-40\n",
		"a link to no SIP":               strings.NewReplacer("sip: 2\n", "sip: 40\n", "id: poaw\n", "id: forty\n").Replace(string(sip2)) + "\nSee [SIP-77](SIP-77.md).\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "evaluations")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(bundled, "SIP-*.md"))
			for _, f := range files {
				b, _ := os.ReadFile(f)
				os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644)
			}
			os.WriteFile(filepath.Join(dir, "SIP-40.md"), []byte(draft), 0o644)
			_, out, _ := runSip(t, "validate", "--format", "json", dir)
			var cli struct {
				Problems []registry.Problem `json:"problems"`
			}
			if err := json.Unmarshal([]byte(out), &cli); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var want []string
			for _, p := range cli.Problems {
				if filepath.Base(p.Path) == "SIP-40.md" {
					want = append(want, key(p.Rule, p.Line, p.Column, strings.ReplaceAll(p.Message, filepath.Dir(dir)+string(filepath.Separator), "")))
				}
			}

			body, _ := json.Marshal(map[string]any{"content": draft, "new": true})
			resp, err := http.Post(m.URL+"/api/v1/sips/validate", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var api struct {
				Problems []struct {
					Rule    string `json:"rule"`
					Line    int    `json:"line"`
					Column  int    `json:"column"`
					Message string `json:"message"`
				} `json:"problems"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&api); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range api.Problems {
				got = append(got, key(p.Rule, p.Line, p.Column, p.Message))
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("the API reports\n%s\nsip validate reports\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func key(rule string, line, col int, msg string) string {
	b, _ := json.Marshal([]any{rule, line, col, msg})
	return string(b)
}
