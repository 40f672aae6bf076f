package api

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

func TestMatchAgents(t *testing.T) {
	var index []indexedAgent
	for _, a := range [][2]string{{"Bold_Scout", "Scouting ahead."}, {"navigator", "A SCOUT at heart, 100% sure."}, {"other", "Nothing to see."},
		{"scout", "The original."}, {"scout-2", "Second."}, {"zeta-scout", "Finds things."}} {
		index = append(index, indexedAgent{card: registry.AgentCard{ID: "agt_" + a[0], Name: a[0], Description: a[1]},
			nameKey: strings.ToLower(a[0]), descKey: strings.ToLower(a[1])})
	}
	for _, c := range []struct {
		query string
		limit int
		want  string
	}{
		{"scout", 10, "[scout scout-2 Bold_Scout zeta-scout navigator]"},
		{"SCOUT", 10, "[scout scout-2 Bold_Scout zeta-scout navigator]"},
		{"scout", 2, "[scout scout-2]"},
		{"scout", 3, "[scout scout-2 Bold_Scout]"},
		{"100%", 10, "[navigator]"},
		{"_", 10, "[Bold_Scout]"},
		{"  bold  ", 10, "[Bold_Scout]"},
		{"", 10, "[]"},
		{"nobody", 10, "[]"},
	} {
		t.Run(fmt.Sprintf("%s/%d", c.query, c.limit), func(t *testing.T) {
			var got []string
			for _, a := range matchAgents(index, c.query, c.limit) {
				got = append(got, a.Name)
			}
			if g := fmt.Sprint(got); g != c.want && !(got == nil && c.want == "[]") {
				t.Errorf("got %s, want %s", g, c.want)
			}
		})
	}
}
