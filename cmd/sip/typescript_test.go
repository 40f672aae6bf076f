package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sipregistry/sip/api"
)

// TestTypeScriptClient: openapi-typescript generates types from the
// served document, tsc compiles examples/typescript against them in
// strict mode, and node runs the result: Proof of Agentic Work, passed,
// against the server `make run` starts. .ci/run installs the pinned tools
// of examples/typescript/package.json and sets SIP_TYPESCRIPT_TOOLS to the
// folder holding their node_modules.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	tools := os.Getenv("SIP_TYPESCRIPT_TOOLS")
	_, noNode := exec.LookPath("node")
	if tools == "" || noNode != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("SIP_TYPESCRIPT_TOOLS is not set or node is missing: .ci/run installs openapi-typescript and typescript")
		}
		t.Skip("SKIPPED: SIP_TYPESCRIPT_TOOLS is not set or node is missing (npm install in a copy of examples/typescript, point SIP_TYPESCRIPT_TOOLS at it)")
	}
	bin := func(name string) string { return filepath.Join(tools, "node_modules", ".bin", name) }
	dir := t.TempDir()
	for _, f := range []string{"poaw.ts", "tsconfig.json", "package.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "typescript", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("%s %v: %v\n%s%s", filepath.Base(name), args, err, out, stderr)
		}
		return out
	}
	run(bin("openapi-typescript"), "openapi.json", "-o", "schema.d.ts")
	run(bin("tsc"), "-p", ".")

	m := MustRunMain(t, &Main{})
	var r struct {
		Outcome      string `json:"outcome"`
		EvaluationID string `json:"evaluation_id"`
	}
	out := run("node", filepath.Join("dist", "poaw.js"), m.URL, "ts-agent")
	if err := json.Unmarshal(out, &r); err != nil || r.Outcome != "passed" || r.EvaluationID != "poaw" {
		t.Errorf("the TypeScript client's result: %s (%v); want a passed poaw", out, err)
	}
}
