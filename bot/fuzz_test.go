package bot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzEnvelope: whatever JSON a (correctly signed) delivery carries, the
// intake's reading of it neither panics nor produces an unbounded key.
func FuzzEnvelope(f *testing.F) {
	files, _ := filepath.Glob("testdata/github-webhooks/*/*.json")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(filepath.Base(filepath.Dir(p)), b)
		}
	}
	f.Add("pull_request", []byte(`{"action":"edited","changes":{"base":null}}`))
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		var env envelope
		if json.Unmarshal(body, &env) != nil {
			return
		}
		wanted(event, &env)
		if k := env.key(event); len(k) > 80 {
			t.Fatalf("key %q", k)
		}
	})
}
