package registry_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

// TestRequiresClaimed: points for fixed answers take claimed agents by
// default and a SIP may opt out; proctored and live class work take them
// unless allow_unclaimed; a SIP may require them of any evaluation.
func TestRequiresClaimed(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	mc := &registry.BenchmarkConfig{Questions: []registry.Question{{ID: "q", Choices: []string{"A", "B"}, Answer: "A"}}}
	free := &registry.BenchmarkConfig{Questions: []registry.Question{{ID: "q", Rubric: "Any."}}}
	for _, tt := range []struct {
		name string
		sip  registry.SIP
		want bool
	}{
		{"points for multiple choice", registry.SIP{Points: 20, Config: registry.Config{Benchmark: mc}}, true},
		{"points for multiple choice, opted out", registry.SIP{Points: 20, Config: registry.Config{Benchmark: mc, RequireClaimed: &no}}, false},
		{"multiple choice without points", registry.SIP{Config: registry.Config{Benchmark: mc}}, false},
		{"points for free answers", registry.SIP{Points: 20, Config: registry.Config{Benchmark: free}}, false},
		{"points for a challenge (PoAW)", registry.SIP{Points: 10, Config: registry.Config{PoAW: &registry.PoAWConfig{}}}, false},
		{"opted in", registry.SIP{Config: registry.Config{RequireClaimed: &yes}}, true},
		{"proctored", registry.SIP{Config: registry.Config{Proctor: &registry.ProctorConfig{}}}, true},
		{"proctored, allow_unclaimed", registry.SIP{Config: registry.Config{Proctor: &registry.ProctorConfig{AllowUnclaimed: true}}}, false},
		{"proctored, allow_unclaimed, opted in", registry.SIP{Config: registry.Config{RequireClaimed: &yes, Proctor: &registry.ProctorConfig{AllowUnclaimed: true}}}, true},
		{"live, opted out without allow_unclaimed", registry.SIP{Config: registry.Config{RequireClaimed: &no, Collaboration: &registry.CollaborationConfig{}}}, true},
		{"live, allow_unclaimed", registry.SIP{Config: registry.Config{Collaboration: &registry.CollaborationConfig{AllowUnclaimed: true}}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sip.RequiresClaimed(); got != tt.want {
				t.Errorf("RequiresClaimed = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRequireClaimedIsValidated: config.require_claimed is a boolean, and
// false where only allow_unclaimed opts out is an error naming it.
func TestRequireClaimedIsValidated(t *testing.T) {
	t.Parallel()
	base := string(siptest.SIP(9, "nine", "active").Content)
	proctored := strings.Replace(strings.Replace(base, "type: simple_pass_fail", "type: proctored", 1),
		"executable:\n  handler: identity_check_handler", "config:\n  require_claimed: false\n  proctor:\n    qualification: poaw\n  instructions: Talk.\nexecutable:\n  handler: proctor_handler", 1)
	for _, tt := range []struct {
		name, content, want string
	}{
		{"true", strings.Replace(base, "executable:", "config:\n  require_claimed: true\nexecutable:", 1), ""},
		{"false", strings.Replace(base, "executable:", "config:\n  require_claimed: false\nexecutable:", 1), ""},
		{"not a boolean", strings.Replace(base, "executable:", "config:\n  require_claimed: sometimes\nexecutable:", 1), "require_claimed"},
		{"false on a proctored SIP", proctored, "allow_unclaimed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := registry.Parse("evaluations/SIP-9.md", []byte(tt.content))
			var errs []string
			for _, p := range doc.Problems {
				if p.Severity == registry.SeverityError {
					errs = append(errs, p.Message)
				}
			}
			switch {
			case tt.want == "" && len(errs) > 0:
				t.Errorf("errors %q, want none", errs)
			case tt.want != "" && (len(errs) != 1 || !strings.Contains(errs[0], tt.want)):
				t.Errorf("errors %q, want one naming %s", errs, tt.want)
			}
		})
	}
}
