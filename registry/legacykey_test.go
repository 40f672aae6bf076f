package registry_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

func TestLegacyKeyID(t *testing.T) {
	t.Parallel()
	key := "safemolt_k3j2h4g5f6d7s8a9q0w1e2r3t4"
	id := registry.KeyID(key)
	if len(id) != 12 || !strings.HasPrefix(id, "sm") {
		t.Fatalf("KeyID(%q) = %q, want sm and ten characters", key, id)
	}
	if again := registry.KeyID(key); again != id {
		t.Errorf("KeyID is not stable: %q then %q", id, again)
	}
	if other := registry.KeyID(key + "x"); other == id {
		t.Errorf("two keys share the id %q", id)
	}
	for _, bad := range []string{"safemolt_", "safemolt_short", "safemolt_" + strings.Repeat("a", 65), "safemolt_has space in it ok", "safemolt_ünïcödé_key_value", "SAFEMOLT_abcdefghijklmnopq"} {
		if got := registry.KeyID(bad); got != "" {
			t.Errorf("KeyID(%q) = %q, want \"\"", bad, got)
		}
	}
	if !registry.KeyMatches(key, registry.HashSecret(key)) {
		t.Error("a SafeMolt key does not match its own hash")
	}
}
