package bot_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/seal"
)

// quizQuestion is one question of a draft benchmark written by a test.
type quizQuestion struct {
	id, prompt string
	choices    []string
	sealed     string
}

// sealedBenchmark is a draft benchmark SIP n whose questions carry their
// sealed answers, each choice list on one line (so that variants with
// choices of other text keep every line number).
func sealedBenchmark(n int, qs ...quizQuestion) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nsip: %d\nid: sealed-%d\nname: Sealed %d\nmodule: safety\ntype: complex_benchmark\nstatus: draft\nauthor: Ada\n"+
		"created_at: 2026-01-01\nupdated_at: 2026-01-01\nversion: \"1.0.0\"\npoints: 5\nconfig:\n  passing_score: 50\n  questions:\n", n, n, n)
	for _, q := range qs {
		prompt, _ := json.Marshal(q.prompt)
		choices, _ := json.Marshal(q.choices)
		fmt.Fprintf(&b, "    - id: %s\n      prompt: %s\n      choices: %s\n      answer_sealed: |\n", q.id, prompt, choices)
		for _, line := range strings.Split(strings.TrimSpace(q.sealed), "\n") {
			b.WriteString("        " + line + "\n")
		}
		b.WriteString("      points: 1\n")
	}
	fmt.Fprintf(&b, "executable:\n  handler: benchmark_handler\n---\n\n# Sealed %d\n\nQuestions whose answers are sealed.\n", n)
	return b.String()
}

// sealedFindings is what a check run says about sealed answers: each
// sealed-answer-invalid annotation as "line: message".
func sealedFindings(run *githubtest.CheckRun) []string {
	var out []string
	for _, a := range run.Annotations {
		if a["title"] == "sealed-answer-invalid" {
			out = append(out, fmt.Sprintf("%v: %v", a["start_line"], a["message"]))
		}
	}
	return out
}

// checkOf opens a pull request of files from its own branch and returns
// its validation check once it ends with the conclusion.
func checkOf(h *harness, branch, conclusion string, files map[string]string) *githubtest.CheckRun {
	h.gh.Push(h.repo, branch, files)
	p := h.gh.OpenPull(h.repo, branch, "mallory")
	h.deliver("pull_request", newGUID(), h.pullEvent("opened", p))
	return h.waitCheck(h.gh.HeadSHA(p), bot.ValidationCheck, "completed", conclusion)
}

// TestSealedAnswersAreChecked: the App holds the registry's sealing key
// and fails the validation check of a pull request whose sealed answers
// do not open with it, for its own SIP and questions as written, to one of
// their choices; what it says is one uniform problem per SIP, never which
// answer failed or why, and never what one opened to.
func TestSealedAnswersAreChecked(t *testing.T) {
	// The registry's key: the one the repository's SIPs (the bundled
	// ones) are sealed to.
	key, err := seal.ParseKey(evaluations.DevelopmentSealingKey)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := seal.Generate()
	q := func(n int, k *seal.Key, id, answer string) quizQuestion {
		qq := quizQuestion{id: id, prompt: "Pick.", choices: []string{"Keep it secret", "Post it"}}
		s, err := seal.Seal(k.Recipient(), seal.Binding{SIP: n, ID: fmt.Sprintf("sealed-%d", n), Question: id, Prompt: qq.prompt, Choices: qq.choices}, answer)
		if err != nil {
			t.Fatal(err)
		}
		qq.sealed = s
		return qq
	}
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t), func(c *bot.Config) { c.SealingKey = key })
		h.run()
		good := checkOf(h, "good", "success", map[string]string{"evaluations/SIP-13.md": sealedBenchmark(13, q(13, key, "q0", "Keep it secret"))})
		if f := sealedFindings(good); len(f) > 0 {
			t.Errorf("a benchmark sealed for itself: %v", f)
		}
		bad := checkOf(h, "bad", "failure", map[string]string{"evaluations/SIP-12.md": sealedBenchmark(12,
			q(12, other, "q0", "Keep it secret"), q(12, key, "q1", "Keep it quiet"), q(12, key, "q2", "Keep it secret"))})
		msgs := sealedFindings(bad)
		if bad.Conclusion != "failure" || len(msgs) != 1 || !strings.Contains(msgs[0], registry.SealedUniform) {
			t.Errorf("annotations %q; want one uniform sealed-answer-invalid", msgs)
		}
		if all := bad.Summary + strings.Join(msgs, ""); strings.Contains(all, "Keep it quiet") || strings.Contains(all, `"q0"`) || strings.Contains(all, `"q1"`) {
			t.Errorf("the check run says something about an individual sealed answer:\n%s", all)
		}
	})
}

// TestSealedAnswersAreNoOracle: someone without the key copies the
// bundled benchmark's sealed answers into a draft SIP of their own, with
// one candidate choice and a decoy per question, or edits the benchmark's
// choices in place; whichever candidate they try (the right answer or a
// wrong one), the check says exactly the same.
func TestSealedAnswersAreNoOracle(t *testing.T) {
	key, err := seal.ParseKey(evaluations.DevelopmentSealingKey)
	if err != nil {
		t.Fatal(err)
	}
	const target = "evaluations/SIP-5.md"
	content := bundled(t)[target]
	doc := registry.Parse(target, []byte(content))
	type probe struct{ right, wrong string }
	var qs []registry.Question
	probes := map[string]probe{}
	for _, q := range doc.SIP.Config.Benchmark.Questions {
		if q.Sealed == "" || !q.MultipleChoice() {
			continue
		}
		answer, err := key.Open(registry.SealBinding(doc.SIP, q), q.Sealed)
		if err != nil {
			t.Fatalf("the bundled %s does not open: %v", q.ID, err)
		}
		i := slices.IndexFunc(q.Choices, func(c string) bool { return c != answer })
		qs = append(qs, q)
		probes[q.ID] = probe{right: answer, wrong: q.Choices[i]}
	}
	if len(qs) < 3 {
		t.Fatalf("the bundled benchmark has %d sealed multiple-choice questions", len(qs))
	}
	copied := func(n int, right bool) string {
		var out []quizQuestion
		for _, q := range qs {
			candidate := probes[q.ID].wrong
			if right {
				candidate = probes[q.ID].right
			}
			out = append(out, quizQuestion{id: q.ID, prompt: q.Prompt, choices: []string{candidate, "decoy"}, sealed: q.Sealed})
		}
		return sealedBenchmark(n, out...)
	}
	// inPlace drops one choice of the first sealed question: the right
	// one, or a wrong one.
	inPlace := func(right bool) string {
		drop := probes[qs[0].ID].wrong
		if right {
			drop = probes[qs[0].ID].right
		}
		line := "        - " + mustJSON(t, drop) + "\n"
		if !strings.Contains(content, line) {
			t.Fatalf("%s does not list the choice %q on a line of its own", target, drop)
		}
		return strings.Replace(content, line, "", 1)
	}
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t), func(c *bot.Config) { c.SealingKey = key })
		h.run()
		for _, tt := range []struct {
			name  string
			files func(right bool) map[string]string
		}{
			{"copied into a draft SIP", func(right bool) map[string]string {
				n := 20 // two open pull requests claim two numbers
				if right {
					n = 21
				}
				return map[string]string{registry.DefaultDir + "/" + registry.FileName(n): copied(n, right)}
			}},
			{"choices edited in place", func(right bool) map[string]string {
				return map[string]string{target: inPlace(right)}
			}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				branch := strings.ReplaceAll(tt.name, " ", "-")
				withRight := checkOf(h, branch+"-right", "failure", tt.files(true))
				withWrong := checkOf(h, branch+"-wrong", "failure", tt.files(false))
				r, w := sealedFindings(withRight), sealedFindings(withWrong)
				if len(r) != 1 || !strings.Contains(r[0], registry.SealedUniform) {
					t.Errorf("findings %q; want the one uniform problem", r)
				}
				if withRight.Conclusion != withWrong.Conclusion || !slices.Equal(r, w) {
					t.Errorf("the check tells the right candidate from a wrong one:\nright: %s %q\nwrong: %s %q",
						withRight.Conclusion, r, withWrong.Conclusion, w)
				}
				if !slices.Equal(titles(withRight), titles(withWrong)) {
					t.Errorf("the problems differ: %v and %v", titles(withRight), titles(withWrong))
				}
			})
		}
	})
}

func titles(run *githubtest.CheckRun) []string {
	var out []string
	for _, a := range run.Annotations {
		out = append(out, fmt.Sprintf("%v:%v:%v", a["title"], a["start_line"], a["message"]))
	}
	slices.Sort(out)
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
