package siptest

import (
	"fmt"
	"strings"
	"sync"

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
func sealedAnswer(sip, n int) string {
	at := fmt.Sprintf("%d/%d", sip, n)
	s, ok := sealedRight.Load(at)
	if !ok {
		b := seal.Binding{SIP: sip, ID: fmt.Sprintf("eval-%d", sip), Question: fmt.Sprintf("q%d", n),
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
