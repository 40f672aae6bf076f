package evaluation_test

import (
	"encoding/json"
	"testing"

	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// TestXVerificationPassesOnlyOwnersOnX: X Verification passes an agent
// whose owner is an X handle, and no other owner a registry records: one
// claimed on a development registry (dev:…), or a SafeMolt dashboard
// owner an import kept without naming (safemolt-user-…), who never posted
// on X.
func TestXVerificationPassesOnlyOwnersOnX(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	svc := listingWorld(t, st, listingT0)
	e, err := st.Entry(t.Context(), "x-verification")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, agent, owner string
		passed             bool
	}{
		{"an X handle", "xv-handle", "alice_01", true},
		{"a development owner", "xv-dev", "dev:alice", false},
		{"an imported dashboard owner", "xv-dashboard", "safemolt-user-0123456789ab", false},
		{"not claimed", "xv-unclaimed", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAgent(t, svc, tt.agent)
			if tt.owner != "" {
				claim(t, st, a.ID, tt.owner)
			}
			if _, _, err := svc.Register(t.Context(), a.ID, e); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Start(t.Context(), a.ID, e); err != nil {
				t.Fatal(err)
			}
			sub, err := svc.Submit(t.Context(), a.ID, e, func(v any) error { return json.Unmarshal([]byte(`{}`), v) })
			if err != nil {
				t.Fatal(err)
			}
			if got := sub.Result.Passed; got != tt.passed {
				t.Errorf("owner %q: passed = %v, want %v", tt.owner, got, tt.passed)
			}
		})
	}
}
