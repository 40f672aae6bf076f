package siptest

import (
	"fmt"
	"strings"
	"sync"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/seal"
)

// The generated benchmarks seal their answers, as a real registry's do,
// to this test key. It is public: it seals nothing but generated test
// questions whose answer is "Right".
const testKey = "# sip sealing key: the registry opens sealed benchmark answers with it. Keep it secret.\n# public key: age1jsl02pt0ct2kfzlc2xyclshmq6tssy8c0x3vzne5dgmgcjme0y8qu2xwlc\nAGE-SECRET-KEY-1V9AYLPY80KX34CMAC6MKQQHXYPA9DM9NWLV6XN6N8RXM98Q8AAFQYSMVJ5\n"

// sealedRight remembers each generated question's sealed answer, so that
// Generate returns the same files for the same seed within a process (age
// encrypts with fresh randomness every time).
var sealedRight sync.Map // "sip/question" → armored age file

// SealingKey is the key the generated benchmarks' answers open with.
func SealingKey() *seal.Key {
	k, err := seal.ParseKey([]byte(testKey))
	if err != nil {
		panic(err)
	}
	return k
}

// sealedAnswer is question qN's answer "Right" of generated SIP sip,
// sealed for that SIP and question as Generate writes them, as YAML lines
// at the indentation of a question's keys.
func sealedAnswer(sip int, id string, n int) string {
	at := fmt.Sprintf("%d/%s/%d", sip, id, n)
	s, ok := sealedRight.Load(at)
	if !ok {
		b := seal.Binding{SIP: sip, ID: id, Question: fmt.Sprintf("q%d", n),
			Prompt: fmt.Sprintf("Question %d about safe behaviour?", n), Choices: []string{"Wrong", "Right", "Also wrong"}}
		sealed, err := seal.Seal(SealingKey().Recipient(), b, "Right")
		if err != nil {
			panic(err)
		}
		s, _ = sealedRight.LoadOrStore(at, sealed)
	}
	var b strings.Builder
	b.WriteString("      answer_sealed: |\n")
	for _, line := range strings.Split(strings.TrimSpace(s.(string)), "\n") {
		b.WriteString("        " + line + "\n")
	}
	return b.String()
}

// SealedBenchmark returns a valid benchmark SIP file evaluations/SIP-<n>.md
// with the given id: three multiple-choice questions whose answers
// ("Right") are sealed to SealingKey, so that a registry with any other
// key cannot open them.
func SealedBenchmark(n int, id string) registry.File {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nsip: %d\nid: %s\nname: \"Benchmark %s\"\nmodule: core\ntype: complex_benchmark\nstatus: active\n", n, id, id)
	b.WriteString("author: Ada\ncreated_at: 2026-01-01\nupdated_at: 2026-01-01\nversion: \"1.0.0\"\npoints: 10\n")
	b.WriteString("config:\n  passing_score: 75\n  time_limit_minutes: 30\n  questions:\n")
	for q := range 3 {
		fmt.Fprintf(&b, "    - id: q%d\n      prompt: \"Question %d about safe behaviour?\"\n      choices: [\"Wrong\", \"Right\", \"Also wrong\"]\n%s      points: 10\n", q, q, sealedAnswer(n, id, q))
	}
	fmt.Fprintf(&b, "executable:\n  handler: benchmark_handler\n---\n\n# Benchmark %s\n\n## How it runs\n\nAnswer every question.\n\n## Passing\n\n75%% of the points.\n", id)
	return registry.File{Path: fmt.Sprintf("evaluations/SIP-%d.md", n), Content: []byte(b.String())}
}
