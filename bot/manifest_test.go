package bot

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/sipregistry/sip/bot/policy"
)

// TestManifest: the App manifest in docs/ subscribes to every event the
// App acts on (installation events are always delivered) and asks for the
// permissions its calls need; the repository's own policy parses.
func TestManifest(t *testing.T) {
	raw, err := os.ReadFile("../docs/github-app-manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Events      []string          `json:"default_events"`
		Permissions map[string]string `json:"default_permissions"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for event := range handled {
		if event == "installation" || event == "installation_repositories" {
			continue
		}
		if !slices.Contains(m.Events, event) {
			t.Errorf("the manifest does not subscribe to %s", event)
		}
	}
	for perm, level := range map[string]string{"checks": "write", "contents": "read", "pull_requests": "write", "issues": "write", "members": "read"} {
		if m.Permissions[perm] != level {
			t.Errorf("permission %s = %q, want %q", perm, m.Permissions[perm], level)
		}
	}
	data, err := os.ReadFile("../.github/sip.yml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := policy.Parse(data); err != nil {
		t.Errorf(".github/sip.yml: %v", err)
	}
}
