package registry_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/seal"
)

// quizSIP is benchmark SIP n (id) with one sealed multiple-choice question.
func quizSIP(n int, id, question, prompt string, choices []string, sealed string) registry.File {
	p, _ := json.Marshal(prompt)
	c, _ := json.Marshal(choices)
	var b strings.Builder
	fmt.Fprintf(&b, "---\nsip: %d\nid: %s\nname: Quiz %d\nmodule: safety\ntype: complex_benchmark\nstatus: draft\nauthor: Ada\n"+
		"created_at: 2026-01-01\nupdated_at: 2026-01-01\nversion: \"1.0.0\"\npoints: 5\nconfig:\n  passing_score: 50\n  questions:\n"+
		"    - id: %s\n      prompt: %s\n      choices: %s\n      answer_sealed: |\n", n, id, n, question, p, c)
	for _, line := range strings.Split(strings.TrimSpace(sealed), "\n") {
		b.WriteString("        " + line + "\n")
	}
	fmt.Fprintf(&b, "      points: 1\nexecutable:\n  handler: benchmark_handler\n---\n\n# Quiz %d\n\n## How it runs\n\nOne question.\n\n## Passing\n\nHalf the points.\n", n)
	return registry.File{Path: registry.DefaultDir + "/" + registry.FileName(n), Content: []byte(b.String())}
}

// TestSealedAnswersSayNothing is the property that keeps sealed answers
// sealed: someone without the key takes a SIP's sealed answer and puts it
// where they like (the same SIP, another SIP, another question, under an
// edited prompt, under choices of their own: a candidate and decoys);
// whatever the sealed answer is, every check says exactly the same —
// without the key, and with it as the App checks pull requests.
func TestSealedAnswersSayNothing(t *testing.T) {
	t.Parallel()
	key, err := seal.Generate()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(26, 1))
	word := func() string { return fmt.Sprintf("choice %d", r.IntN(1000)) }
	for i := range 40 {
		choices := []string{word(), word(), word(), word()}
		slices.Sort(choices)
		choices = slices.Compact(choices)
		target := seal.Binding{SIP: 5, ID: "target", Question: "q", Prompt: "Which one?", Choices: choices}
		candidate := choices[r.IntN(len(choices))]
		// Where the attacker puts the block: n, id, question, prompt, choices.
		places := []struct {
			name     string
			n        int
			id, q, p string
			choices  []string
		}{
			{"another SIP", 9, "practice", "q", "Which one?", choices},
			{"another SIP of the same number", 5, "practice", "q", "Which one?", choices},
			{"another question", 5, "target", "q2", "Which one?", choices},
			{"an edited prompt", 5, "target", "q", "Which one is wrong?", choices},
			{"a candidate and a decoy", 5, "target", "q", "Which one?", []string{candidate, "decoy"}},
			{"a decoy added", 5, "target", "q", "Which one?", append(slices.Clone(choices), "decoy")},
			{"reordered", 5, "target", "q", "Which one?", append(slices.Clone(choices[1:]), choices[0])},
		}
		// Answers the block may hold: each choice, and what is no choice.
		answers := append(slices.Clone(choices), "decoy", "")
		for _, place := range places {
			t.Run(place.name, func(t *testing.T) {
				var first []string
				for j, answer := range answers {
					s, err := seal.Seal(key.Recipient(), target, answer)
					if err != nil {
						t.Fatal(err)
					}
					f := quizSIP(place.n, place.id, place.q, place.p, place.choices, s)
					var said []string
					for _, opts := range []registry.Options{{Dir: registry.DefaultDir}, {Dir: registry.DefaultDir, Key: key}} {
						for _, p := range registry.Validate(registry.ParseFiles([]registry.File{f}), opts) {
							said = append(said, p.String())
						}
					}
					if j == 0 {
						first = said
						if !slices.ContainsFunc(said, func(s string) bool { return strings.Contains(s, registry.SealedUniform) }) {
							t.Fatalf("round %d: got %q; want the uniform sealed-answer problem", i, said)
						}
						continue
					}
					if !slices.Equal(said, first) {
						t.Fatalf("round %d: got checks that tell answer %d from answer 0:\n%q\n%q; want the same", i, j, said, first)
					}
				}
			})
		}
		// In place, every answer among the choices says the same (nothing).
		for _, answer := range choices {
			s, _ := seal.Seal(key.Recipient(), target, answer)
			f := quizSIP(5, "target", "q", "Which one?", choices, s)
			if ps := registry.Validate(registry.ParseFiles([]registry.File{f}), registry.Options{Dir: registry.DefaultDir, Key: key}); len(ps) > 0 {
				t.Fatalf("round %d: the SIP as sealed has problems: %v", i, ps)
			}
		}
	}
}

// TestSealedDetailsForTheKeyHolder: whoever holds the key (ShowSealed)
// is told which sealed answer fails and why; the answer is never printed.
func TestSealedDetailsForTheKeyHolder(t *testing.T) {
	t.Parallel()
	key, _ := seal.Generate()
	choices := []string{"Before any change", "Never"}
	b := seal.Binding{SIP: 5, ID: "target", Question: "q", Prompt: "When?", Choices: choices}
	notChoice, _ := seal.Seal(key.Recipient(), b, "Sometimes")
	copied, _ := seal.Seal(key.Recipient(), seal.Binding{SIP: 4, ID: "other", Question: "q", Prompt: "When?", Choices: choices}, "Never")
	for _, tt := range []struct {
		name, sealed, want string
	}{
		{"not a choice", notChoice, `the sealed answer of question "q" is not one of its choices`},
		{"copied from another SIP", copied, "it was sealed for SIP-4"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := quizSIP(5, "target", "q", "When?", choices, tt.sealed)
			ps := registry.Validate(registry.ParseFiles([]registry.File{f}), registry.Options{Dir: registry.DefaultDir, Key: key, ShowSealed: true})
			if len(ps) != 1 || !strings.Contains(ps[0].Message, tt.want) || strings.Contains(ps[0].Message, "Sometimes") {
				t.Errorf("problems %v; want one saying %q", ps, tt.want)
			}
		})
	}
}
