package registrytest

import (
	"fmt"
	"testing"

	"github.com/sipregistry/sip/registry"
)

// testAgentSearch: search finds public agents by name or description,
// ignoring case, the exact name first then prefixes; LIKE's wildcards
// are taken literally; private agents are never found nor named.
func testAgentSearch(t *testing.T, s registry.AgentStore) {
	ctx := t.Context()
	mk := func(name, desc string, public bool) *registry.Agent {
		t.Helper()
		a, _, err := registry.NewAgent(name, desc, t0)
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
	mk("zeta-scout", "Finds things.", true)
	mk("scout", "The original.", true)
	mk("Bold_Scout", "Scouting ahead.", true)
	mk("hidden-scout", "Keeps its results private.", false)
	mk("navigator", "A SCOUT at heart, 100% sure.", true)
	mk("other", "Nothing to see.", true)
	for _, c := range []struct {
		query string
		want  string
	}{
		{"scout", "[scout Bold_Scout navigator zeta-scout]"},
		{"SCOUT", "[scout Bold_Scout navigator zeta-scout]"},
		{"bold", "[Bold_Scout]"},
		{"100%", "[navigator]"},
		{"%", "[navigator]"},  // a literal percent sign, not everything
		{"_", "[Bold_Scout]"}, // a literal underscore
		{`\`, "[]"},           // the escape character itself
		{"hidden", "[]"},      // private agents are not found
		{"nobody-at-all", "[]"},
	} {
		t.Run(c.query, func(t *testing.T) {
			found, err := s.SearchAgents(ctx, c.query, 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range found {
				got = append(got, a.Name)
			}
			if fmt.Sprint(got) != c.want && !(len(got) == 0 && c.want == "[]") {
				t.Errorf("SearchAgents(%q) = %v, want %s", c.query, got, c.want)
			}
		})
	}
	if found, err := s.SearchAgents(ctx, "scout", 2); err != nil || len(found) != 2 {
		t.Errorf("limit 2: %d agents, %v", len(found), err)
	}

	pub, _ := s.AgentByName(ctx, "scout")
	priv, _ := s.AgentByName(ctx, "hidden-scout")
	names, err := s.PublicAgentNames(ctx, []string{pub.ID, priv.ID, "agt_unknown"})
	if err != nil || len(names) != 1 || names[pub.ID] != "scout" {
		t.Errorf("PublicAgentNames = %v, %v; want only the public agent", names, err)
	}
	if names, err := s.PublicAgentNames(ctx, nil); err != nil || len(names) != 0 {
		t.Errorf("PublicAgentNames(nil) = %v, %v", names, err)
	}
}
