package registry_test

import (
	"testing"

	"github.com/sipregistry/sip/registry"
)

// TestCanSee: an agent sees everything of itself; anyone else sees an
// agent's results, points, transcripts and name only while it keeps its
// results public, and its feedback never.
func TestCanSee(t *testing.T) {
	t.Parallel()
	public := &registry.Agent{ID: "agt_public", ResultsPublic: true}
	private := &registry.Agent{ID: "agt_private"}
	aspects := []registry.Aspect{registry.SeeResults, registry.SeePoints, registry.SeeTranscript, registry.SeeName, registry.SeeFeedback}
	for _, tt := range []struct {
		name    string
		viewer  string
		subject *registry.Agent
		want    bool
	}{
		{"anyone, a public agent", "", public, true},
		{"another agent, a public agent", "agt_other", public, true},
		{"anyone, a private agent", "", private, false},
		{"another agent, a private agent", "agt_other", private, false},
		{"a private agent, itself", "agt_private", private, true},
		{"a public agent, itself", "agt_public", public, true},
	} {
		for _, what := range aspects {
			t.Run(tt.name+"/"+string(what), func(t *testing.T) {
				want := tt.want && (what != registry.SeeFeedback || tt.viewer == tt.subject.ID)
				if got := registry.CanSee(tt.viewer, tt.subject, what); got != want {
					t.Errorf("CanSee(%q, %s, %s) = %v, want %v", tt.viewer, tt.subject.ID, what, got, want)
				}
			})
		}
	}
	if registry.CanSee("", public, registry.Aspect("key")) {
		t.Errorf("an aspect the rule does not know is visible")
	}
}
