package api_test

import (
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/seal"
)

// sealedQuiz is a benchmark of n multiple-choice questions whose answers
// ("right") are sealed to key, drawing sample of them per attempt (0:
// every one).
func sealedQuiz(t *testing.T, key *seal.Key, n, sample int) registry.File {
	t.Helper()
	var cfg strings.Builder
	cfg.WriteString("  passing_score: 100\n  time_limit_minutes: 30\n")
	if sample > 0 {
		fmt.Fprintf(&cfg, "  sample: %d\n", sample)
	}
	cfg.WriteString("  questions:\n")
	for i := range n {
		b := seal.Binding{SIP: 60 + n, ID: fmt.Sprintf("sealed-quiz-%d", n), Question: fmt.Sprintf("q%d", i), Prompt: "Pick.", Choices: []string{"w1", "right", "w2"}}
		s, err := seal.Seal(key.Recipient(), b, "right")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&cfg, "    - id: q%d\n      prompt: \"Pick.\"\n      choices: [\"w1\", \"right\", \"w2\"]\n      answer_sealed: |\n", i)
		for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
			cfg.WriteString("        " + line + "\n")
		}
		fmt.Fprintf(&cfg, "      points: %d\n", i+1)
	}
	return versioned(60+n, fmt.Sprintf("sealed-quiz-%d", n), "complex_benchmark", "benchmark_handler", "1.0.0", cfg.String())
}

type quizStart struct {
	Questions []struct {
		ID      string   `json:"id"`
		Choices []string `json:"choices"`
		Answer  string   `json:"answer"`
		Sealed  string   `json:"answer_sealed"`
		Points  float64  `json:"points"`
	} `json:"questions"`
}

// TestSealedAnswersGrade: a benchmark whose answers are sealed to the
// registry's key grades as a plain one would; start hands out neither the
// answers nor what seals them; the key's public half is served.
func TestSealedAnswersGrade(t *testing.T) {
	t.Parallel()
	key, err := seal.Generate()
	if err != nil {
		t.Fatal(err)
	}
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorldWith(t, s, func(c *api.Config) { c.SealingKey, c.SealingKeyIsDevelopment = key, false })
		w.resync(t, "c-sealed", sealedQuiz(t, key, 3, 0))
		const ev = "/api/v1/evaluations/sealed-quiz-3"

		var pub struct {
			Recipient   string   `json:"recipient"`
			Recipients  []string `json:"recipients"`
			Development bool     `json:"development"`
		}
		if resp := w.Get("/api/v1/sealing-key", &pub); resp.StatusCode != 200 || pub.Recipient != key.Recipient() || pub.Development ||
			!slices.Equal(pub.Recipients, []string{key.Recipient()}) {
			t.Errorf("GET /api/v1/sealing-key: %d %+v; want %s, not development", resp.StatusCode, pub, key.Recipient())
		}

		for _, right := range []bool{true, false} {
			a := w.agent(fmt.Sprintf("sealed-taker-%v", right)).asCandidate(t)
			a.call("POST", ev+"/register", "", nil)
			var st quizStart
			if code := a.call("POST", ev+"/start", "", &st); code != 200 || len(st.Questions) != 3 {
				t.Fatalf("start: %d, %d questions", code, len(st.Questions))
			}
			answers := map[string]string{}
			for _, q := range st.Questions {
				if q.Answer != "" || q.Sealed != "" {
					t.Errorf("start hands out question %s's answer (%q) or its seal", q.ID, q.Answer)
				}
				answers[q.ID] = "right"
				if !right {
					answers[q.ID] = "w1"
				}
			}
			body, _ := json.Marshal(map[string]any{"answers": answers})
			var r resultBody
			if code := a.call("POST", ev+"/submit", string(body), &r); code != 201 || r.Result.Passed != right {
				t.Errorf("submit (right=%v): %d passed=%v", right, code, r.Result.Passed)
			}
		}
	})
}

// TestSealedToAnotherKey: a registry whose key does not open a
// benchmark's answers lists it as unavailable, with the reason, to anyone
// (the API and the enrol table) and refuses to register for it (409,
// naming the question and never an answer); an attempt registered while
// the registry still served the right key is refused at start (503)
// instead of graded as failed. Without any key it says so, and serves no
// public key.
func TestSealedToAnotherKey(t *testing.T) {
	t.Parallel()
	sealedTo, _ := seal.Generate()
	other, _ := seal.Generate()
	for _, tt := range []struct {
		name string
		key  *seal.Key
		want string
	}{
		{"another key", other, `question "q0" does not open (it was not sealed to this registry's key)`},
		{"no key", nil, "this registry has no sealing key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
				// Two servers on one database: one with the key the
				// answers were sealed to, one without it.
				right := newWorldWith(t, s, func(c *api.Config) { c.SealingKey = sealedTo })
				w := newWorldWith(t, s, func(c *api.Config) { c.SealingKey = tt.key })
				w.resync(t, "c-sealed", sealedQuiz(t, sealedTo, 2, 0))
				const ev = "/api/v1/evaluations/sealed-quiz-2"
				early := right.agent("early").asCandidate(t)
				if code := early.call("POST", ev+"/register", "", nil); code != 201 {
					t.Fatalf("register where the answers open: %d, want 201", code)
				}

				type listing struct {
					Evaluations []struct {
						ID          string `json:"id"`
						CanRegister bool   `json:"can_register"`
						Reason      *struct {
							Code    string `json:"code"`
							Message string `json:"message"`
							Hint    string `json:"hint"`
						} `json:"reason"`
					} `json:"evaluations"`
				}
				a := w.agent("unopened")
				for _, who := range []struct {
					name string
					get  func(out any) int
				}{
					{"anyone", func(out any) int { return w.Get("/api/v1/evaluations", out).StatusCode }},
					{"an agent", func(out any) int { return a.call("GET", "/api/v1/evaluations", "", out) }},
				} {
					t.Run(who.name, func(t *testing.T) {
						var l listing
						if code := who.get(&l); code != 200 {
							t.Fatalf("listing: got %d, want 200", code)
						}
						found := false
						for _, e := range l.Evaluations {
							if e.ID != "sealed-quiz-2" {
								continue
							}
							found = true
							if e.CanRegister || e.Reason == nil || e.Reason.Code != "evaluation_unavailable" ||
								!strings.Contains(e.Reason.Message, tt.want) || e.Reason.Hint == "" {
								t.Errorf("got can_register %v, reason %+v; want evaluation_unavailable saying %q", e.CanRegister, e.Reason, tt.want)
							}
						}
						if !found {
							t.Errorf("sealed-quiz-2 not listed; want it listed unavailable")
						}
					})
				}

				var e errorResponse
				resp := w.Do("POST", ev+"/register", strings.NewReader(""), bearer(a.key), &e)
				if resp.StatusCode != 409 || e.ErrorDetail.Code != "evaluation_unavailable" || !strings.Contains(e.Error, tt.want) || strings.Contains(e.Error, "right") {
					t.Errorf("register: %d %s %q; want 409 evaluation_unavailable saying %q", resp.StatusCode, e.ErrorDetail.Code, e.Error, tt.want)
				}
				resp = w.Do("POST", ev+"/start", strings.NewReader(""), bearer(early.key), &e)
				if resp.StatusCode != 503 || !strings.Contains(e.Error, tt.want) || strings.Contains(e.Error, "right") {
					t.Errorf("start of an attempt registered before: %d %q; want 503 saying %q", resp.StatusCode, e.Error, tt.want)
				}

				_, page := getPage(t, w.BaseURL+"/evaluations")
				if !strings.Contains(page, `<span class="tag unavailable">unavailable</span>`) || !strings.Contains(page, html.EscapeString(tt.want)) {
					t.Errorf("the enrol table does not show sealed-quiz-2 unavailable, saying %q", tt.want)
				}
				var pub map[string]any
				if got := w.Get("/api/v1/sealing-key", &pub).StatusCode; (tt.key == nil) != (got == 404) {
					t.Errorf("GET /api/v1/sealing-key: %d", got)
				}
			})
		})
	}
}

// TestSealedCopiedElsewhere: sealed answers copied into a practice SIP (the
// same questions under another number and id) or under edited choices do
// not open there, whatever they hold: the practice SIP cannot be started,
// so its scores cannot give the original's answers away.
func TestSealedCopiedElsewhere(t *testing.T) {
	t.Parallel()
	key, _ := seal.Generate()
	original := sealedQuiz(t, key, 2, 0)
	for _, tt := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"practice SIP", func(s string) string {
			return strings.NewReplacer("sip: 62\n", "sip: 70\n", "id: sealed-quiz-2\n", "id: practice-quiz\n").Replace(s)
		}, "it was sealed for SIP-62"},
		{"practice SIP of the same number", func(s string) string {
			return strings.Replace(s, "id: sealed-quiz-2\n", "id: practice-quiz\n", 1)
		}, "changed since it was sealed"},
		{"one candidate and a decoy", func(s string) string {
			return strings.ReplaceAll(strings.Replace(s, "id: sealed-quiz-2\n", "id: practice-quiz\n", 1), `["w1", "right", "w2"]`, `["right", "decoy"]`)
		}, "changed since it was sealed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
				w := newWorldWith(t, s, func(c *api.Config) { c.SealingKey = key })
				content := tt.edit(string(original.Content))
				practice := registry.File{Path: registry.DefaultDir + "/" + registry.FileName(registry.Parse("p.md", []byte(content)).SIP.Number), Content: []byte(content)}
				w.resync(t, "c-practice", practice)
				a := w.agent("practising")
				// The copy's answers do not open here, so it takes no
				// registrations (and an attempt begun before would get 503
				// at start): the refusal names why, never the answer.
				var e errorResponse
				resp := w.Do("POST", "/api/v1/evaluations/practice-quiz/register", strings.NewReader(""), bearer(a.key), &e)
				if resp.StatusCode != 409 || e.ErrorDetail.Code != "evaluation_unavailable" || !strings.Contains(e.Error, tt.want) || strings.Contains(e.Error, "right\"") {
					t.Errorf("register: %d %s %q; want 409 evaluation_unavailable saying %q", resp.StatusCode, e.ErrorDetail.Code, e.Error, tt.want)
				}
			})
		})
	}
}

// TestSampledQuestions: with config.sample each attempt gets that many
// questions of the pool, the same on every start of one attempt; the
// score counts the drawn questions only; an answer to a question not
// drawn is refused; attempts draw different questions.
func TestSampledQuestions(t *testing.T) {
	t.Parallel()
	key, _ := seal.Generate()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorldWith(t, s, func(c *api.Config) { c.SealingKey = key })
		w.resync(t, "c-sample", sealedQuiz(t, key, 6, 2))
		const ev = "/api/v1/evaluations/sealed-quiz-6"
		draws := map[string]bool{}
		for i := range 12 {
			a := w.agent(fmt.Sprintf("sampler-%d", i)).asCandidate(t)
			a.call("POST", ev+"/register", "", nil)
			var st, again quizStart
			a.call("POST", ev+"/start", "", &st)
			a.call("POST", ev+"/start", "", &again)
			var ids, againIDs []string
			var points float64
			for _, q := range st.Questions {
				ids, points = append(ids, q.ID), points+q.Points
			}
			for _, q := range again.Questions {
				againIDs = append(againIDs, q.ID)
			}
			if len(ids) != 2 || !slices.Equal(ids, againIDs) {
				t.Fatalf("start drew %v, then %v; want the same 2 questions", ids, againIDs)
			}
			draws[strings.Join(ids, ",")] = true
			if i == 0 {
				// A question of the pool that was not drawn.
				var undrawn string
				for q := range 6 {
					if id := fmt.Sprintf("q%d", q); !slices.Contains(ids, id) {
						undrawn = id
					}
				}
				var e errorResponse
				body, _ := json.Marshal(map[string]any{"answers": map[string]string{ids[0]: "right", ids[1]: "right", undrawn: "right"}})
				if resp := w.Do("POST", ev+"/submit", strings.NewReader(string(body)), bearer(a.key), &e); resp.StatusCode != 400 {
					t.Errorf("an answer to an undrawn question: %d, want 400", resp.StatusCode)
				}
			}
			body, _ := json.Marshal(map[string]any{"answers": map[string]string{ids[0]: "right", ids[1]: "right"}})
			var r struct {
				Result struct {
					Passed   bool    `json:"passed"`
					Score    float64 `json:"score"`
					MaxScore float64 `json:"max_score"`
				} `json:"result"`
			}
			if code := a.call("POST", ev+"/submit", string(body), &r); code != 201 || !r.Result.Passed || r.Result.MaxScore != points || r.Result.Score != points {
				t.Errorf("submit of the 2 drawn: %d %+v; want passed with %g of %g", code, r.Result, points, points)
			}
		}
		// 12 attempts drawing 2 of 6 (15 pairs) all alike: about 1e-13.
		if len(draws) < 2 {
			t.Errorf("12 attempts drew one set of questions: %v", draws)
		}
	})
}
