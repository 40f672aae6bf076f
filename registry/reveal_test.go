package registry_test

import (
	"testing"

	"github.com/sipregistry/sip/registry"
)

// TestEffectiveReveal: an evaluation that awards points or has sealed
// answers reveals only pass or fail unless its SIP says otherwise; any
// other reveals its score by default; a SIP's own choice always holds.
func TestEffectiveReveal(t *testing.T) {
	t.Parallel()
	sealed := &registry.BenchmarkConfig{Questions: []registry.Question{{ID: "q", Sealed: "-----BEGIN AGE ENCRYPTED FILE-----"}}}
	plain := &registry.BenchmarkConfig{Questions: []registry.Question{{ID: "q", Answer: "A"}}}
	for _, tt := range []struct {
		name string
		sip  registry.SIP
		want string
	}{
		{"no points, plain answers", registry.SIP{Config: registry.Config{Benchmark: plain}}, registry.RevealScore},
		{"no points, no questions", registry.SIP{}, registry.RevealScore},
		{"points", registry.SIP{Points: 5, Config: registry.Config{Benchmark: plain}}, registry.RevealPassFail},
		{"sealed answers", registry.SIP{Config: registry.Config{Benchmark: sealed}}, registry.RevealPassFail},
		{"points, and the SIP chooses score", registry.SIP{Points: 5, Config: registry.Config{Reveal: registry.RevealScore}}, registry.RevealScore},
		{"no points, and the SIP chooses none", registry.SIP{Config: registry.Config{Reveal: registry.RevealNone}}, registry.RevealNone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sip.EffectiveReveal(); got != tt.want {
				t.Errorf("EffectiveReveal = %q, want %q", got, tt.want)
			}
		})
	}
}
