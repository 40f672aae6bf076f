package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/seal"
)

const sealAbout = `
Seals benchmark answers to a registry's public key, so that the SIP file,
which is public, no longer gives them away. Only the registry, holding the
private key (SIP_SEALING_KEY_FILE), opens them to grade.

  sip seal --recipient age1… FILE...
      replaces each plain answer: in the files' benchmark questions with
      answer_sealed:, in place, and checks the result still parses. The
      registry's key is at GET /api/v1/sealing-key.
  sip seal --recipient age1… --question ID --answer TEXT FILE
      prints one sealed answer for question ID of the SIP in FILE, to
      paste by hand.

Each answer is sealed for its SIP (number and id) and its question as
written (id, prompt, choices): it opens for nothing else, so change the
SIP's number or id, or a sealed question's prompt or choices, and seal
that answer again.
  sip seal --new-key FILE
      writes a new sealing key for a registry (mode 0600) and prints its
      public key. Keep the file secret; after a rotation keep the old
      identity lines below the new one, so answers sealed to them open.

The recipient may also come from SIP_SEALING_RECIPIENT. Exit status: 0
sealed, 64 usage, 65 a file cannot be sealed, 66 a file does not exist,
78 the key or recipient is not valid.`

func runSeal(_ context.Context, e env, args []string) int {
	fs := newFlagSet("seal", "--recipient age1… FILE... | --recipient age1… --question ID --answer TEXT FILE | --new-key FILE", sealAbout)
	recipient := fs.String("recipient", e.getenv("SIP_SEALING_RECIPIENT"), "the registry's public sealing key (age1…)")
	question := fs.String("question", "", "with --answer: the id of the question the answer belongs to")
	answer := fs.String("answer", "", "with --question: the answer to seal")
	newKey := fs.String("new-key", "", "write a new sealing key to this file and print its public key")
	files, code, ok := parseFlags(fs, e, args)
	if !ok {
		return code
	}
	switch {
	case *newKey != "":
		if len(files) > 0 || *question != "" {
			fmt.Fprintln(e.stderr, "sip seal: --new-key takes no other arguments")
			return exitUsage
		}
		return writeNewKey(e, *newKey)
	case *recipient == "":
		fmt.Fprintln(e.stderr, "sip seal: --recipient is required: the registry's public key, from GET /api/v1/sealing-key")
		return exitUsage
	case *question != "" || *answer != "":
		if *question == "" || len(files) != 1 {
			fmt.Fprintln(e.stderr, "sip seal: --answer needs --question and the one SIP file the question is in")
			return exitUsage
		}
		return sealOne(e, *recipient, files[0], *question, *answer)
	case len(files) == 0:
		fmt.Fprintln(e.stderr, "sip seal: name the SIP files to seal, e.g. sip seal --recipient age1… evaluations/SIP-5.md")
		return exitUsage
	}
	if err := seal.CheckRecipient(*recipient); err != nil {
		fmt.Fprintf(e.stderr, "sip seal: %v\n", err)
		return exitConfig
	}
	worst := exitOK
	for _, path := range files {
		if code := sealFile(e, *recipient, path); code > worst {
			worst = code
		}
	}
	return worst
}

func writeNewKey(e env, path string) int {
	k, err := seal.Generate()
	if err != nil {
		fmt.Fprintf(e.stderr, "sip seal: %v\n", err)
		return exitInternal
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip seal: %v (an existing key is never overwritten)\n", err)
		return exitConfig
	}
	if _, err := f.Write(k.File()); err != nil {
		f.Close()
		fmt.Fprintf(e.stderr, "sip seal: %v\n", err)
		return exitInternal
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(e.stderr, "sip seal: %v\n", err)
		return exitInternal
	}
	fmt.Fprintf(e.stdout, "%s\n", k.Recipient())
	fmt.Fprintf(e.stderr, "sip seal: wrote a new sealing key to %s; serve with SIP_SEALING_KEY_FILE=%s and seal answers to the public key above\n", path, path)
	return exitOK
}

// sealOne prints the sealed answer of one question of the SIP in path.
func sealOne(e env, recipient, path, question, answer string) int {
	content, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip seal: %v\n", err)
		return exitNoInput
	}
	doc := registry.Parse(path, content)
	if doc.SIP == nil || doc.SIP.Config.Benchmark == nil {
		fmt.Fprintf(e.stderr, "sip seal: %s: not a benchmark SIP that parses (run sip validate)\n", path)
		return exitData
	}
	for _, q := range doc.SIP.Config.Benchmark.Questions {
		if q.ID != question {
			continue
		}
		if q.MultipleChoice() && !slices.Contains(q.Choices, answer) {
			fmt.Fprintf(e.stderr, "sip seal: %s: question %q: the answer is not one of its choices\n", path, question)
			return exitData
		}
		s, err := seal.Seal(recipient, registry.SealBinding(doc.SIP, q), answer)
		if err != nil {
			fmt.Fprintf(e.stderr, "sip seal: %v\n", err)
			return exitConfig
		}
		fmt.Fprint(e.stdout, "answer_sealed: |\n"+indent(s, "  "))
		return exitOK
	}
	fmt.Fprintf(e.stderr, "sip seal: %s: no question %q\n", path, question)
	return exitData
}

// answerLine is a block-mapping line holding a question's answer key.
var answerLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\s*(?:- )?)answer:(\s.*)?$`) })

// sealFile replaces every plain answer of the file's benchmark questions
// with answer_sealed, then checks that the file still parses to the same
// questions, each now sealed. The file is written only if all of it
// seals.
func sealFile(e env, recipient, path string) int {
	content, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip seal: %v\n", err)
		return exitNoInput
	}
	doc := registry.Parse(path, content)
	if doc.SIP == nil || doc.SIP.Config.Benchmark == nil {
		fmt.Fprintf(e.stderr, "sip seal: %s: not a benchmark SIP that parses (run sip validate)\n", path)
		return exitData
	}
	lines := strings.SplitAfter(string(content), "\n")
	var plain []registry.Question
	for _, q := range doc.SIP.Config.Benchmark.Questions {
		if q.Answer != "" {
			plain = append(plain, q)
		}
	}
	if len(plain) == 0 {
		fmt.Fprintf(e.stdout, "%s: no plain answers to seal\n", path)
		return exitOK
	}
	// From the last answer up, so earlier line numbers stay true.
	for i := len(plain) - 1; i >= 0; i-- {
		q := plain[i]
		n := doc.AnswerSpan(q.ID).Line - 1
		m := answerLine().FindStringSubmatch(strings.TrimRight(lines[n], "\r\n"))
		if m == nil {
			fmt.Fprintf(e.stderr, "sip seal: %s:%d: question %q: put `answer:` on a line of its own to seal it, or use --question and --answer\n", path, n+1, q.ID)
			return exitData
		}
		keyCol := len(m[1])
		end := n + 1
		if v := strings.TrimSpace(m[2]); strings.HasPrefix(v, "|") || strings.HasPrefix(v, ">") {
			for end < len(lines) && (strings.TrimSpace(lines[end]) == "" || leadingSpaces(lines[end]) > keyCol) {
				end++
			}
		}
		sealed, err := seal.Seal(recipient, registry.SealBinding(doc.SIP, q), q.Answer)
		if err != nil {
			fmt.Fprintf(e.stderr, "sip seal: %v\n", err)
			return exitConfig
		}
		repl := m[1] + "answer_sealed: |\n" + indent(sealed, strings.Repeat(" ", keyCol+2))
		lines = append(lines[:n], append([]string{repl}, lines[end:]...)...)
	}
	out := strings.Join(lines, "")
	if msg := checkSealed(path, doc, []byte(out)); msg != "" {
		fmt.Fprintf(e.stderr, "sip seal: %s: %s; the file is unchanged\n", path, msg)
		return exitData
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		fmt.Fprintf(e.stderr, "sip seal: %v\n", err)
		return exitInternal
	}
	fmt.Fprintf(e.stdout, "%s: sealed %d answers\n", path, len(plain))
	if w := positionWarning(doc.SIP.Config.Benchmark); w != "" {
		fmt.Fprintf(e.stderr, "sip seal: %s: warning: %s\n", path, w)
	}
	return exitOK
}

// checkSealed parses the rewritten file and compares it with the
// original: the same questions, no plain answer left, each sealed answer
// well formed, and no problem that was not there before.
func checkSealed(path string, before *registry.Document, after []byte) string {
	doc := registry.Parse(path, after)
	if doc.SIP == nil || doc.SIP.Config.Benchmark == nil {
		return "the sealed file does not parse"
	}
	was, now := before.SIP.Config.Benchmark.Questions, doc.SIP.Config.Benchmark.Questions
	if len(was) != len(now) {
		return "the sealed file has other questions"
	}
	for i, q := range now {
		if q.ID != was[i].ID || q.Answer != "" || (was[i].Answer != "" && seal.Check(q.Sealed) != nil) {
			return fmt.Sprintf("question %q did not seal cleanly", q.ID)
		}
	}
	old := map[string]bool{}
	for _, p := range before.Problems {
		old[p.Rule+p.Message] = true
	}
	for _, p := range doc.Problems {
		if p.Severity == registry.SeverityError && !old[p.Rule+p.Message] {
			return fmt.Sprintf("sealing would add a problem at line %d: %s", p.Line, p.Message)
		}
	}
	return ""
}

// positionWarning notices a pattern a reader of the public file could
// use: every answer at one position of its choices. Only the contributor,
// who has the answers, sees it.
func positionWarning(b *registry.BenchmarkConfig) string {
	pos, n := -1, 0
	for _, q := range b.Questions {
		if !q.MultipleChoice() || q.Answer == "" {
			continue
		}
		i := indexOf(q.Choices, q.Answer)
		if pos >= 0 && i != pos {
			return ""
		}
		pos = i
		n++
	}
	if n < 3 {
		return ""
	}
	return fmt.Sprintf("every answer is choice %d of its question: the file's order is public, so list the choices in an order that says nothing (each attempt sees them shuffled anyway)", pos+1)
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func leadingSpaces(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// indent prefixes every line of s with pre.
func indent(s, pre string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(pre + line + "\n")
	}
	return b.String()
}
