package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
)

// strategyQuestions are ten questions of four choices whose right choice
// ("R…") is the shortest, as a careful author writes them.
func strategyQuestions() string {
	var b strings.Builder
	b.WriteString("  passing_score: 100\n  questions:\n")
	for i := range 10 {
		fmt.Fprintf(&b, "    - id: q%d\n      prompt: \"Question %d?\"\n      choices: [\"R%d\", \"wrong one %d\", \"wrong two %d\", \"wrong three %d\"]\n      answer: \"R%d\"\n      points: 1\n",
			i, i, i, i, i, i, i)
	}
	return b.String()
}

// allRight reports whether answers chose the right choice ("R…") of all
// ten strategyQuestions.
func allRight(answers map[string]string) bool {
	right := 0
	for _, a := range answers {
		if strings.HasPrefix(a, "R") {
			right++
		}
	}
	return right == 10
}

// TestStrategiesNeverPass: on a benchmark with the default settings (it
// awards points, so it reveals pass or fail only and takes claimed agents
// only), 200 attempts by fresh agents of one owner, choosing always the
// same position, always the longest choice, or changing one answer per
// attempt, never pass, and every failed attempt shows its agent the same
// thing, so nothing read off them tells one answer from another: no key.
// Fresh unclaimed agents do not get an attempt at all.
func TestStrategiesNeverPass(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorldWith(t, s, func(c *api.Config) { c.PublicRate = 1000 }) // 220 agents, 200 claims
		w.resync(t, "c-defaults", versioned(54, "defaults", "complex_benchmark", "benchmark_handler", "1.0.0", strategyQuestions()))
		const ev = "/api/v1/evaluations/defaults"
		type question struct {
			ID      string   `json:"id"`
			Choices []string `json:"choices"`
		}
		// base is the one-change strategy's answers: the first choice of
		// each question as the first attempt saw it; attempt n changes
		// question n%10 to its next choice.
		base := map[string]string{}
		strategies := map[string]func(n int, qs []question) map[string]string{
			"position": func(n int, qs []question) map[string]string {
				out := map[string]string{}
				for _, q := range qs {
					out[q.ID] = q.Choices[n%len(q.Choices)]
				}
				return out
			},
			"longest choice": func(_ int, qs []question) map[string]string {
				out := map[string]string{}
				for _, q := range qs {
					for _, c := range q.Choices {
						if len(c) > len(out[q.ID]) {
							out[q.ID] = c
						}
					}
				}
				return out
			},
			"one change per attempt": func(n int, qs []question) map[string]string {
				out := map[string]string{}
				for _, q := range qs {
					if base[q.ID] == "" {
						base[q.ID] = q.Choices[0]
					}
					out[q.ID] = base[q.ID]
				}
				q := qs[n%len(qs)]
				for i, c := range q.Choices {
					if c == base[q.ID] {
						out[q.ID] = q.Choices[(i+1)%len(q.Choices)]
					}
				}
				return out
			},
		}
		seen := map[string]int{} // what a failed attempt shows its agent
		attempts := 0
		for name, choose := range strategies {
			for n := range 67 {
				if attempts == 200 {
					break
				}
				attempts++
				a := w.agent(fmt.Sprintf("puppet-%d", attempts))
				a.claimBy(t, "one_operator")
				if code := a.call("POST", ev+"/register", "", nil); code != 201 {
					t.Fatalf("%s, attempt %d: register: %d", name, n, code)
				}
				var st struct {
					Questions []question `json:"questions"`
				}
				if code := a.call("POST", ev+"/start", "", &st); code != 200 || len(st.Questions) != 10 {
					t.Fatalf("%s, attempt %d: start: %d", name, n, code)
				}
				answers := choose(n, st.Questions)
				// A blind strategy can draw every right answer by luck
				// (about once in a million attempts, choices being
				// shuffled); a pass then says nothing about a leak, so
				// such a draw gets one answer wrong and the test stays
				// deterministic about what the server tells.
				if allRight(answers) {
					q := st.Questions[0]
					for _, c := range q.Choices {
						if !strings.HasPrefix(c, "R") {
							answers[q.ID] = c
							break
						}
					}
				}
				body, _ := json.Marshal(map[string]any{"answers": answers})
				var r struct {
					Result struct {
						ID string `json:"id"`
					} `json:"result"`
				}
				if code := a.call("POST", ev+"/submit", string(body), &r); code != 201 {
					t.Fatalf("%s, attempt %d: submit: %d", name, n, code)
				}
				var shown struct {
					Result  map[string]any `json:"result"`
					Details map[string]any `json:"details"`
				}
				a.call("GET", "/api/v1/results/"+r.Result.ID, "", &shown)
				if shown.Result["passed"] != false {
					t.Fatalf("%s, attempt %d passed: %v", name, n, shown.Result)
				}
				for _, k := range []string{"id", "agent_id", "registration_id", "completed_at"} {
					delete(shown.Result, k)
				}
				seen[fmt.Sprint(shown.Result, shown.Details)]++
			}
		}
		if attempts != 200 {
			t.Fatalf("%d attempts, want 200", attempts)
		}
		if len(seen) != 1 {
			t.Errorf("failed attempts show %d different things, want one: %v", len(seen), seen)
		}
		for v := range seen {
			if strings.Contains(v, "score:0") || strings.Contains(v, "score:1") || strings.Contains(v, "of 10") {
				t.Errorf("a failed attempt shows a score: %s", v)
			}
		}
		for i := range 20 {
			var e errorResponse
			if code := w.agent(fmt.Sprintf("unclaimed-%d", i)).call("POST", ev+"/register", "", &e); code != 403 || e.ErrorDetail.Code != "claim_required" {
				t.Fatalf("an unclaimed agent registering: %d %s, want 403 claim_required", code, e.ErrorDetail.Code)
			}
		}
	})
}
