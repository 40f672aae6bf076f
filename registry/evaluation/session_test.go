package evaluation_test

import (
	"testing"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
)

// TestSessionPhase: the one "session ended" rule, and Open its opposite
// for a started session.
func TestSessionPhase(t *testing.T) {
	t.Parallel()
	now := listingT0
	for _, tt := range []struct {
		name     string
		s        evaluation.Session
		want     evaluation.SessionStatus
		wantOpen bool
	}{
		{"forming", evaluation.Session{Status: evaluation.SessionForming}, evaluation.SessionForming, false},
		{"active, unbounded", evaluation.Session{Status: evaluation.SessionActive}, evaluation.SessionActive, true},
		{"active, time left", evaluation.Session{Status: evaluation.SessionActive, EndsAt: now.Add(time.Second)}, evaluation.SessionActive, true},
		{"active, time up this instant", evaluation.Session{Status: evaluation.SessionActive, EndsAt: now}, evaluation.SessionEnded, false},
		{"active, time up, ungraded", evaluation.Session{Status: evaluation.SessionActive, EndsAt: now.Add(-time.Hour)}, evaluation.SessionEnded, false},
		{"ended", evaluation.Session{Status: evaluation.SessionEnded, EndsAt: now.Add(time.Hour)}, evaluation.SessionEnded, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.Phase(now); got != tt.want {
				t.Errorf("Phase = %s, want %s", got, tt.want)
			}
			if got := tt.s.Open(now); got != tt.wantOpen {
				t.Errorf("Open = %v, want %v", got, tt.wantOpen)
			}
		})
	}
}
