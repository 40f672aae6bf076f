package registrytest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sipregistry/sip/registry"
)

// testPublicAgents: search and leaderboards see only agents that keep
// their results public, and see a change of mind at once.
func testPublicAgents(t *testing.T, s registry.AgentStore) {
	ctx := t.Context()
	mk := func(name string, public bool) *registry.Agent {
		t.Helper()
		a, _, err := registry.NewAgent(name, "About "+name+".", t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		if !public {
			if _, err := s.UpdateAgent(ctx, a.ID, registry.AgentUpdate{ResultsPublic: new(false)}); err != nil {
				t.Fatal(err)
			}
		}
		return a
	}
	pub := mk("scout", true)
	mk("Bold_Scout", true)
	priv := mk("hidden-scout", false)
	cards, err := s.PublicAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cards {
		got = append(got, c.Name+": "+c.Description)
	}
	slices.Sort(got)
	if want := "[Bold_Scout: About Bold_Scout. scout: About scout.]"; fmt.Sprint(got) != want {
		t.Errorf("PublicAgents = %v, want %s", got, want)
	}

	names, err := s.PublicAgentNames(ctx, []string{pub.ID, priv.ID, "agt_unknown"})
	if err != nil || len(names) != 1 || names[pub.ID] != "scout" {
		t.Errorf("PublicAgentNames = %v, %v; want only the public agent", names, err)
	}
	if _, err := s.UpdateAgent(ctx, pub.ID, registry.AgentUpdate{ResultsPublic: new(false)}); err != nil {
		t.Fatal(err)
	}
	if names, err := s.PublicAgentNames(ctx, []string{pub.ID}); err != nil || len(names) != 0 {
		t.Errorf("after hiding its results: %v, %v; want none", names, err)
	}
	if names, err := s.PublicAgentNames(ctx, nil); err != nil || len(names) != 0 {
		t.Errorf("PublicAgentNames(nil) = %v, %v", names, err)
	}
}
