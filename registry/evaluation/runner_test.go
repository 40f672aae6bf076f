package evaluation_test

import (
	"slices"
	"testing"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// TestRunnersMatchCatalogue: every catalogued handler has a runner, and
// every runner runs a catalogued handler, once.
func TestRunnersMatchCatalogue(t *testing.T) {
	catalogued := registry.HandlerNames()
	runners := evaluation.RunnerHandlers()
	for _, h := range catalogued {
		if !slices.Contains(runners, h) {
			t.Errorf("catalogued handler %s has no runner", h)
		}
	}
	seen := map[string]bool{}
	for _, h := range runners {
		if !slices.Contains(catalogued, h) {
			t.Errorf("runner %s runs no catalogued handler", h)
		}
		if seen[h] {
			t.Errorf("two runners for %s", h)
		}
		seen[h] = true
	}
}

func TestPasses(t *testing.T) {
	for _, tt := range []struct {
		name                string
		score, max, passing float64
		want                bool
	}{
		{"exactly the passing score", 8, 10, 80, true},
		{"just below", 7.99, 10, 80, false},
		{"nothing to score", 0, 0, 0, false},
		{"full marks", 10, 10, 100, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := evaluation.Passes(tt.score, tt.max, tt.passing); got != tt.want {
				t.Errorf("Passes(%g, %g, %g) = %v, want %v", tt.score, tt.max, tt.passing, got, tt.want)
			}
		})
	}
}

func TestOutcomesTable(t *testing.T) {
	codes := map[int]evaluation.Outcome{}
	for _, o := range evaluation.Outcomes {
		if prev, ok := codes[o.ExitCode]; ok {
			t.Errorf("%s and %s share exit code %d", prev, o.Outcome, o.ExitCode)
		}
		codes[o.ExitCode] = o.Outcome
	}
	if codes[evaluation.ExitSuccess] != evaluation.OutcomePassed || codes[evaluation.ExitTimeout] != evaluation.OutcomeExpired {
		t.Errorf("exit codes %v; want 0 passed and 81 expired", codes)
	}
}
