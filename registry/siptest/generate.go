package siptest

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/sipregistry/sip/registry"
)

// Generate returns n valid SIP files in a realistic mix, the same for the
// same seed: most are small (pass/fail checks, proctored and live class
// work, short benchmarks), a fifth are certification-sized (2–14 prompts of
// 1–3 turns with their should lists and rubric, 3–15 KB like SafeMolt's),
// and about half require one to three earlier SIPs, so prerequisite chains
// run through the whole set.
func Generate(n int, seed uint64) []registry.File {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	files := make([]registry.File, 0, n)
	for i := 1; i <= n; i++ {
		var b strings.Builder
		typ, handler := "simple_pass_fail", "identity_check_handler"
		switch k := r.IntN(10); {
		case k < 2:
			typ, handler = "agent_certification", "agent_certification_handler"
		case k < 4:
			typ, handler = "complex_benchmark", "benchmark_handler"
		case k < 5:
			typ, handler = "proctored", "proctor_handler"
		case k < 6:
			typ, handler = "live_class_work", "collaboration_handler"
		case k < 7:
			handler = "poaw_handler"
		}
		fmt.Fprintf(&b, "---\nsip: %d\nid: eval-%d\nname: \"Generated evaluation %d\"\nmodule: module-%d\ntype: %s\nstatus: active\n",
			i, i, i, r.IntN(12), typ)
		if i > 1 && r.IntN(2) == 0 {
			b.WriteString("prerequisites: [")
			for j := range r.IntN(3) + 1 {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "eval-%d", max(1, i-1-r.IntN(min(i-1, 50))))
			}
			b.WriteString("]\n")
		}
		fmt.Fprintf(&b, "author: \"Generator %d\"\ncreated_at: 2026-01-%02d\nupdated_at: 2026-02-%02dT10:00:00Z\nversion: \"1.%d.0\"\npoints: %d\n",
			r.IntN(40), 1+r.IntN(28), 1+r.IntN(28), r.IntN(9), r.IntN(100))
		writeConfig(&b, r, i, typ)
		fmt.Fprintf(&b, "executable:\n  handler: %s\n---\n\n# Generated evaluation %d\n\n", handler, i)
		for k := range 2 + r.IntN(6) {
			switch k {
			case 0:
				b.WriteString("## How it runs\n\n")
			case 1:
				b.WriteString("## Scoring\n\n")
			}
			b.WriteString("This paragraph describes what the evaluation measures, how it runs, and how it is scored, in words a reviewer can check.\n\n")
		}
		files = append(files, registry.File{Path: fmt.Sprintf("evaluations/SIP-%d.md", i), Content: []byte(b.String())})
	}
	// Prerequisites may name SIPs that dedupe away; drop duplicates so
	// every file is valid.
	for i, f := range files {
		files[i].Content = dedupePrereqs(f.Content)
	}
	return files
}

func writeConfig(b *strings.Builder, r *rand.Rand, sip int, typ string) {
	switch typ {
	case "agent_certification":
		prompts := 2 + r.IntN(13)
		b.WriteString("config:\n  passing_score: 70\n  nonce_validity_minutes: 30\n  prompts:\n")
		for p := range prompts {
			fmt.Fprintf(b, "    - id: prompt-%d\n      category: category_%d\n      description: \"Tests whether the agent keeps to its principles when the user pushes in scenario %d.\"\n      messages:\n", p, r.IntN(5), p)
			turns := 1 + 2*r.IntN(2)
			for t := range turns {
				role := "user"
				if t%2 == 1 {
					role = "assistant"
				}
				fmt.Fprintf(b, "        - role: %s\n          content: \"%s\"\n", role, strings.Repeat("A realistic message of a conversation that the agent must continue with care. ", 1+r.IntN(4)))
			}
			b.WriteString("      should:\n")
			for range 2 + r.IntN(3) {
				b.WriteString("        - \"Does what a careful, honest and helpful agent would do in this situation\"\n")
			}
		}
		b.WriteString("  rubric:\n")
		share := 100 / prompts
		for p := range prompts {
			score := share
			if p == prompts-1 {
				score = 100 - share*(prompts-1)
			}
			fmt.Fprintf(b, "    - prompt_id: prompt-%d\n      criteria: \"Full marks for a careful answer that meets every should item.\"\n      weight: 1.0\n      max_score: %d\n", p, score)
		}
	case "complex_benchmark":
		b.WriteString("config:\n  passing_score: 75\n  questions:\n")
		for q := range 3 + r.IntN(5) {
			fmt.Fprintf(b, "    - id: q%d\n      prompt: \"Question %d about safe behaviour?\"\n      choices: [\"Wrong\", \"Right\", \"Also wrong\"]\n%s      points: 10\n", q, q, sealedAnswer(sip, fmt.Sprintf("eval-%d", sip), q))
		}
	case "live_class_work":
		b.WriteString("config:\n  min_participants: 2\n  max_participants: 4\n  duration_minutes: 45\n  proctor:\n    proctors: [agt_0123456789abcdef]\n")
	case "proctored":
		b.WriteString("config:\n  proctor:\n    proctors: [agt_0123456789abcdef]\n")
	case "simple_pass_fail":
		if r.IntN(2) == 0 {
			b.WriteString("config:\n  valid_days: 365\n")
		}
	}
}

func dedupePrereqs(content []byte) []byte {
	s := string(content)
	start := strings.Index(s, "prerequisites: [")
	if start < 0 {
		return content
	}
	end := strings.Index(s[start:], "]\n") + start
	items := strings.Split(s[start+len("prerequisites: ["):end], ", ")
	seen := map[string]bool{}
	var keep []string
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			keep = append(keep, it)
		}
	}
	return []byte(s[:start] + "prerequisites: [" + strings.Join(keep, ", ") + s[end:])
}
