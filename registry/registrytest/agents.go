package registrytest

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sipregistry/sip/registry"
)

// AgentOpener returns a new, migrated, empty agent store.
type AgentOpener func(t *testing.T) registry.AgentStore

// RunAgentStoreTests runs the agent half of the conformance suite.
func RunAgentStoreTests(t *testing.T, open AgentOpener) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, registry.AgentStore)
	}{
		{"CreateAndFind", testAgentCreateAndFind},
		{"NamesAreUniqueIgnoringCase", testAgentNames},
		{"ConstraintsInSQL", testAgentConstraints},
		{"Update", testAgentUpdate},
		{"ClaimOnce", testAgentClaim},
		{"ConcurrentRegistrations", testAgentConcurrentCreate},
		{"RotateKeyOnce", testAgentRotateKey},
		{"PublicAgentsOnly", testPublicAgents},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

func mustAgent(t *testing.T, s registry.AgentStore, name string) (*registry.Agent, registry.Credentials) {
	t.Helper()
	a, c, err := registry.NewAgent(name, "An agent.", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAgent(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	return a, c
}

func testAgentCreateAndFind(t *testing.T, s registry.AgentStore) {
	ctx := t.Context()
	a, c := mustAgent(t, s, "Ada_Agent-1")
	for name, find := range map[string]func() (*registry.Agent, error){
		"key id":      func() (*registry.Agent, error) { return s.AgentByKeyID(ctx, registry.KeyID(c.APIKey)) },
		"name":        func() (*registry.Agent, error) { return s.AgentByName(ctx, "ada_agent-1") },
		"id":          func() (*registry.Agent, error) { return s.AgentByID(ctx, a.ID) },
		"claim token": func() (*registry.Agent, error) { return s.AgentByClaimToken(ctx, registry.HashSecret(c.ClaimToken)) },
	} {
		got, err := find()
		if err != nil {
			t.Fatalf("by %s: %v", name, err)
		}
		if diff := cmp.Diff(a, got); diff != "" {
			t.Errorf("by %s (-want +got):\n%s", name, diff)
		}
	}
	if !registry.KeyMatches(c.APIKey, a.KeyHash) || registry.KeyMatches(c.APIKey+"x", a.KeyHash) {
		t.Error("KeyMatches is wrong")
	}
	for name, err := range map[string]error{
		"unknown key id":   second(s.AgentByKeyID(ctx, "000000000000")),
		"unknown name":     second(s.AgentByName(ctx, "nobody")),
		"unknown token":    second(s.AgentByClaimToken(ctx, registry.HashSecret("x"))),
		"update unknown":   second(s.UpdateAgent(ctx, "agt_none", registry.AgentUpdate{})),
		"update unknown 2": second(s.UpdateAgent(ctx, "agt_none", registry.AgentUpdate{Description: ptr("x")})),
	} {
		if !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func ptr[T any](v T) *T { return &v }

func testAgentNames(t *testing.T, s registry.AgentStore) {
	mustAgent(t, s, "Grace")
	a, _, _ := registry.NewAgent("GRACE", "", t0)
	if err := s.CreateAgent(t.Context(), a); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("same name in other case: %v, want ErrConflict", err)
	}
}

func testAgentConstraints(t *testing.T, s registry.AgentStore) {
	for name, mutate := range map[string]func(a *registry.Agent){
		"bad name":         func(a *registry.Agent) { a.Name = "no spaces allowed" },
		"short name":       func(a *registry.Agent) { a.Name = "ab" },
		"long description": func(a *registry.Agent) { a.Description = strings.Repeat("d", 501) },
		"bad key hash":     func(a *registry.Agent) { a.KeyHash = "plaintext" },
	} {
		a, _, err := registry.NewAgent("Valid_Name", "", t0)
		if err != nil {
			t.Fatal(err)
		}
		mutate(a)
		if err := s.CreateAgent(t.Context(), a); !errors.Is(err, registry.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	a, _ := mustAgent(t, s, "Limits")
	if _, err := s.UpdateAgent(t.Context(), a.ID, registry.AgentUpdate{IdentityMD: ptr(strings.Repeat("i", registry.MaxIdentityMD+1))}); !errors.Is(err, registry.ErrInvalid) {
		t.Errorf("identity over 10 KiB: %v", err)
	}
}

func testAgentUpdate(t *testing.T, s registry.AgentStore) {
	ctx := t.Context()
	a, _ := mustAgent(t, s, "Updater")
	got, err := s.UpdateAgent(ctx, a.ID, registry.AgentUpdate{Description: ptr("New."), ResultsPublic: ptr(false)})
	if err != nil || got.Description != "New." || got.ResultsPublic || got.IdentityMD != "" {
		t.Fatalf("%+v, %v", got, err)
	}
	got, err = s.UpdateAgent(ctx, a.ID, registry.AgentUpdate{IdentityMD: ptr("# Me\n")})
	if err != nil || got.IdentityMD != "# Me\n" || got.Description != "New." || got.ResultsPublic {
		t.Fatalf("%+v, %v", got, err)
	}
	if got, err = s.UpdateAgent(ctx, a.ID, registry.AgentUpdate{}); err != nil || got.IdentityMD != "# Me\n" {
		t.Errorf("empty update: %+v, %v", got, err)
	}
}

func testAgentClaim(t *testing.T, s registry.AgentStore) {
	ctx := t.Context()
	_, c := mustAgent(t, s, "Claimed")
	tok := registry.HashSecret(c.ClaimToken)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			a, err := s.ClaimAgent(ctx, tok, "owner_handle", t0.Add(time.Minute))
			switch {
			case err == nil:
				wins.Add(1)
				if a.Owner != "owner_handle" || !a.ClaimedAt.Equal(t0.Add(time.Minute)) || !a.Claimed() {
					t.Errorf("claimed agent %+v", a)
				}
			case !errors.Is(err, registry.ErrConflict):
				t.Errorf("claim: %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d claims won, want 1", wins.Load())
	}
	if _, err := s.ClaimAgent(ctx, registry.HashSecret("nope"), "x", t0); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("unknown token: %v", err)
	}
}

func testAgentConcurrentCreate(t *testing.T, s registry.AgentStore) {
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			a, _, err := registry.NewAgent("Racer", "", t0)
			if err != nil {
				t.Error(err)
				return
			}
			switch err := s.CreateAgent(t.Context(), a); {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, registry.ErrConflict):
				t.Errorf("create: %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d registrations of one name won, want 1", wins.Load())
	}
}

// testAgentRotateKey: of concurrent rotations from one key, one wins; the
// old key id no longer finds the agent, the new one does.
func testAgentRotateKey(t *testing.T, s registry.AgentStore) {
	a, _ := mustAgent(t, s, "rotator")
	var wins atomic.Int32
	newIDs := make([]string, 6)
	var wg sync.WaitGroup
	for i := range newIDs {
		wg.Go(func() {
			keyID, keyHash, _, err := registry.NewAPIKey()
			if err != nil {
				t.Error(err)
				return
			}
			_, err = s.RotateKey(t.Context(), a.ID, a.KeyID, keyID, keyHash)
			switch {
			case err == nil:
				wins.Add(1)
				newIDs[i] = keyID
			case !errors.Is(err, registry.ErrConflict):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d rotations from one key won, want 1", wins.Load())
	}
	if _, err := s.AgentByKeyID(t.Context(), a.KeyID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("the old key id still finds the agent: %v", err)
	}
	for _, id := range newIDs {
		if id == "" {
			continue
		}
		if got, err := s.AgentByKeyID(t.Context(), id); err != nil || got.ID != a.ID {
			t.Errorf("the new key id finds %+v, %v", got, err)
		}
	}
	if _, err := s.RotateKey(t.Context(), "agt_none", "x", "y", strings.Repeat("0", 64)); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("rotating an unknown agent: %v, want ErrNotFound", err)
	}
}
