package evaluation

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

// TestConcealKeepsNothingOfTheScore: with pass_fail or none a failed
// attempt keeps no score, no per-item grade, no goal checks and no reason
// written from its score; with score it keeps everything.
func TestConcealKeepsNothingOfTheScore(t *testing.T) {
	t.Parallel()
	score, max := 10.0, 30.0
	failed := func() grade {
		return grade{outcome: OutcomeFailed, score: &score, maxScore: &max, reason: "scored 10 of 30; free answers graded by proctor P",
			goal:    []Check{{Name: "q1", Passed: true, Message: "right"}},
			details: map[string]any{"scores": []any{1, 2}, "proctor_feedback": "f", "session_id": "ses_1", "judge_raw": "r"}}
	}
	for _, reveal := range []string{registry.RevealPassFail, registry.RevealNone} {
		t.Run(reveal, func(t *testing.T) {
			g := conceal(failed(), reveal)
			if g.score != nil || g.maxScore != nil || g.goal != nil {
				t.Errorf("kept score %v, max %v, goal %v", g.score, g.maxScore, g.goal)
			}
			if strings.Contains(g.reason, "10") || strings.Contains(g.reason, "30") {
				t.Errorf("the reason %q holds the score", g.reason)
			}
			if len(g.details) != 1 || g.details["session_id"] != "ses_1" {
				t.Errorf("details %v, want the session only", g.details)
			}
		})
	}
	if g := conceal(failed(), registry.RevealScore); g.score == nil || !strings.Contains(g.reason, "10 of 30") {
		t.Errorf("score reveals the score: %+v", g)
	}
	// A reason that does not come from a score stays for pass_fail.
	expired := grade{outcome: OutcomeExpired, reason: "submitted after expires_at"}
	if g := conceal(expired, registry.RevealPassFail); g.reason != "submitted after expires_at" {
		t.Errorf("an expired attempt's reason under pass_fail: %q", g.reason)
	}
}
