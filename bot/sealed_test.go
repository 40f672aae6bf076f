package bot_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry/seal"
)

// sealedBenchmark is a draft benchmark SIP whose questions carry the
// given sealed answers.
func sealedBenchmark(n int, sealed ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nsip: %d\nid: sealed-%d\nname: Sealed %d\nmodule: safety\ntype: complex_benchmark\nstatus: draft\nauthor: Ada\n"+
		"created_at: 2026-01-01\nupdated_at: 2026-01-01\nversion: \"1.0.0\"\npoints: 5\nconfig:\n  passing_score: 50\n  questions:\n", n, n, n)
	for i, s := range sealed {
		fmt.Fprintf(&b, "    - id: q%d\n      prompt: \"Pick.\"\n      choices: [\"Keep it secret\", \"Post it\"]\n      answer_sealed: |\n", i)
		for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
			b.WriteString("        " + line + "\n")
		}
		b.WriteString("      points: 1\n")
	}
	fmt.Fprintf(&b, "executable:\n  handler: benchmark_handler\n---\n\n# Sealed %d\n\nQuestions whose answers are sealed.\n", n)
	return b.String()
}

// TestSealedAnswersAreChecked: the App holds the registry's sealing key
// and fails the validation check of a pull request whose sealed answer
// does not open with it, or opens to something that is not a choice,
// naming the question and never printing what it opened to.
func TestSealedAnswersAreChecked(t *testing.T) {
	// The registry's key: the one the repository's SIPs (the bundled
	// ones) are sealed to.
	key, err := seal.ParseKey(evaluations.DevelopmentSealingKey)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := seal.Generate()
	seal1 := func(k *seal.Key, q, a string) string {
		s, err := seal.Seal(k.Recipient(), q, a)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t), func(c *bot.Config) { c.SealingKey = key })
		h.run()
		bad := sealedBenchmark(12, seal1(other, "q0", "Keep it secret"), seal1(key, "q1", "Keep it quiet"))
		good := sealedBenchmark(13, seal1(key, "q0", "Keep it secret"))
		h.gh.Push(h.repo, "bad", map[string]string{"evaluations/SIP-12.md": bad})
		h.gh.Push(h.repo, "good", map[string]string{"evaluations/SIP-13.md": good})
		pb, pg := h.gh.OpenPull(h.repo, "bad", "ann"), h.gh.OpenPull(h.repo, "good", "bob")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pb))
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pg))
		h.waitCheck(h.gh.HeadSHA(pg), bot.ValidationCheck, "completed", "success")
		run := h.waitCheck(h.gh.HeadSHA(pb), bot.ValidationCheck, "completed", "failure")
		var msgs []string
		for _, a := range run.Annotations {
			if a["title"] == "sealed-answer-invalid" {
				msgs = append(msgs, fmt.Sprint(a["message"]))
			}
		}
		if len(msgs) != 2 || !strings.Contains(msgs[0], `question "q0"`) || !strings.Contains(msgs[0], "not sealed to this registry's key") ||
			!strings.Contains(msgs[1], `question "q1" is not one of its choices`) {
			t.Errorf("annotations %q; want q0 not sealed to the key, q1 not a choice", msgs)
		}
		if strings.Contains(run.Summary+strings.Join(msgs, ""), "Keep it quiet") {
			t.Error("the check run prints what a sealed answer opened to")
		}
	})
}
