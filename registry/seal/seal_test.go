package seal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/armor"

	"github.com/sipregistry/sip/registry/seal"
)

// quiz is a question as a SIP writes it; its answers are sealed for it.
var quiz = seal.Binding{SIP: 9, ID: "backup-quiz", Question: "q1", Prompt: "When should an agent make a backup?",
	Choices: []string{"Whenever there is time", "right", "Never"}}

// for_ is quiz's binding with question q.
func for_(q string) seal.Binding {
	b := quiz
	b.Question = q
	return b
}

func newKey(t *testing.T) *seal.Key {
	t.Helper()
	k, err := seal.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpens(t *testing.T) {
	t.Parallel()
	k := newKey(t)
	for _, answer := range []string{"Read access to that folder only", "", "ünïcode \"quoted\"\nand a newline", strings.Repeat("x", 5000)} {
		s, err := seal.Seal(k.Recipient(), quiz, answer)
		if err != nil {
			t.Fatal(err)
		}
		if err := seal.Check(s); err != nil {
			t.Errorf("Check of a fresh seal: %v", err)
		}
		got, err := k.Open(quiz, s)
		if err != nil || got != answer {
			t.Errorf("Open = %q, %v; want %q", got, err, answer)
		}
	}
}

// TestSealedLengthSaysNothing: choices of different lengths seal to
// ciphertexts of one length, so the SIP file does not give the answer
// away by its size.
func TestSealedLengthSaysNothing(t *testing.T) {
	t.Parallel()
	k := newKey(t)
	choices := []string{"Yes", "Treat the text as data to summarise, not as an instruction, and tell the user it is there", "No"}
	lengths := map[int]bool{}
	for _, c := range choices {
		s, err := seal.Seal(k.Recipient(), for_("prompt-injection"), c)
		if err != nil {
			t.Fatal(err)
		}
		lengths[len(s)] = true
	}
	if len(lengths) != 1 {
		t.Errorf("sealed lengths %v, want one length for every choice", lengths)
	}
	a, _ := seal.Seal(k.Recipient(), for_("q"), "same")
	b, _ := seal.Seal(k.Recipient(), for_("q"), "same")
	if a == b {
		t.Error("sealing one answer twice gave one ciphertext: equal answers would show")
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	k := newKey(t)
	other := newKey(t)
	good, err := seal.Seal(k.Recipient(), quiz, "right")
	if err != nil {
		t.Fatal(err)
	}
	toOther, _ := seal.Seal(other.Recipient(), quiz, "right")
	lines := strings.Split(good, "\n")
	// Flip one character of the payload (the last line before the footer).
	i := len(lines) - 3
	b := []byte(lines[i])
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	lines[i] = string(b)
	tampered := strings.Join(lines, "\n")
	edited := func(edit func(b *seal.Binding)) seal.Binding {
		b := quiz
		b.Choices = slices.Clone(quiz.Choices)
		edit(&b)
		return b
	}
	for _, tt := range []struct {
		name   string
		for_   seal.Binding
		sealed string
		want   string
	}{
		{"another key", quiz, toOther, "not sealed to this registry's key"},
		{"another question", for_("q2"), good, `sealed for question "q1"`},
		{"another SIP's number", edited(func(b *seal.Binding) { b.SIP = 10 }), good, "sealed for SIP-9"},
		{"another SIP's id", edited(func(b *seal.Binding) { b.ID = "practice-quiz" }), good, "changed since it was sealed"},
		{"an edited prompt", edited(func(b *seal.Binding) { b.Prompt = "When should an agent NOT make a backup?" }), good, "changed since it was sealed"},
		{"an edited choice", edited(func(b *seal.Binding) { b.Choices[0] = "decoy" }), good, "changed since it was sealed"},
		{"a choice added", edited(func(b *seal.Binding) { b.Choices = append(b.Choices, "decoy") }), good, "changed since it was sealed"},
		{"a choice removed", edited(func(b *seal.Binding) { b.Choices = b.Choices[1:] }), good, "changed since it was sealed"},
		{"choices reordered", edited(func(b *seal.Binding) { b.Choices[0], b.Choices[2] = b.Choices[2], b.Choices[0] }), good, "changed since it was sealed"},
		{"no choices", edited(func(b *seal.Binding) { b.Choices = nil }), good, "changed since it was sealed"},
		{"sealed before binding", quiz, unbound(t, k, "q1", "right"), "before sealed answers were bound"},
		{"tampered", quiz, tampered, "decrypt"},
		{"not armored", quiz, "right", "ASCII-armored age file"},
		{"armor of garbage", quiz, seal.Header + "\nAAAA\n-----END AGE ENCRYPTED FILE-----", "not a valid age file"},
		{"too large", quiz, strings.Repeat("A", seal.MaxSealed+1), "at most"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := k.Open(tt.for_, tt.sealed)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open = %q, %v; want an error containing %q", got, err, tt.want)
			}
			if strings.Contains(err.Error(), "right") {
				t.Errorf("the error %q quotes the answer", err)
			}
		})
	}
}

// unbound seals the way answers were sealed before they were bound to
// their SIP: the question's id and the answer only.
func unbound(t *testing.T, k *seal.Key, question, answer string) string {
	t.Helper()
	r, err := age.ParseX25519Recipient(k.Recipient())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	aw := armor.NewWriter(&out)
	w, err := age.Encrypt(aw, r)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(map[string]string{"question": question, "answer": answer})
	w.Write(plain)
	w.Close()
	aw.Close()
	return out.String()
}

// TestOpenBindsEveryField: a sealed answer opens for exactly the binding
// it was sealed with, and for no binding that differs in any one field.
func TestOpenBindsEveryField(t *testing.T) {
	t.Parallel()
	k := newKey(t)
	good, err := seal.Seal(k.Recipient(), quiz, "right")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k.Open(quiz, good); err != nil || got != "right" {
		t.Fatalf("Open for its own binding = %q, %v", got, err)
	}
	// A string with a separator in it must not collide with two strings.
	pairs := []seal.Binding{
		{SIP: 9, ID: "a", Question: "b", Prompt: "c", Choices: []string{"d", "e"}},
		{SIP: 9, ID: "a", Question: "b", Prompt: "c", Choices: []string{"d\x00e"}},
		{SIP: 9, ID: "a", Question: "b", Prompt: "c", Choices: []string{"d", "e", ""}},
		{SIP: 9, ID: "a\x00b", Question: "", Prompt: "c", Choices: []string{"d", "e"}},
		{SIP: 9, ID: "a", Question: "b", Prompt: "c", Choices: []string{}},
		{SIP: 9, ID: "a", Question: "b", Prompt: "c", Choices: []string{""}},
	}
	for i, sealedFor := range pairs {
		s, err := seal.Seal(k.Recipient(), sealedFor, "right")
		if err != nil {
			t.Fatal(err)
		}
		for j, openFor := range pairs {
			_, err := k.Open(openFor, s)
			if (err == nil) != (i == j) {
				t.Errorf("sealed for %+v, opened for %+v: %v", sealedFor, openFor, err)
			}
			if err != nil && !errors.Is(err, seal.ErrNotBound) {
				t.Errorf("sealed for %+v, opened for %+v: %v, want ErrNotBound", sealedFor, openFor, err)
			}
		}
	}
}

// TestKeyFile: a key file round-trips, keeps older identities after a
// rotation (answers sealed to them still open), and a bad file is refused
// without quoting it.
func TestKeyFile(t *testing.T) {
	t.Parallel()
	old := newKey(t)
	sealedOld, _ := seal.Seal(old.Recipient(), quiz, "kept")
	fresh := newKey(t)
	rotated, err := seal.ParseKey(append(fresh.File(), old.File()...))
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Recipient() != fresh.Recipient() {
		t.Errorf("Recipient = %s, want the first identity's %s", rotated.Recipient(), fresh.Recipient())
	}
	if got := rotated.Recipients(); len(got) != 2 || got[1] != old.Recipient() {
		t.Errorf("Recipients = %v", got)
	}
	if got, err := rotated.Open(quiz, sealedOld); err != nil || got != "kept" {
		t.Errorf("an answer sealed to the older key: %q, %v", got, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "AGE-SECRET-KEY-1NOTAKEY\n"} {
		_, err := seal.ParseKey([]byte(bad))
		if err == nil {
			t.Errorf("ParseKey(%q) succeeded", bad)
		} else if bad != "" && strings.Contains(err.Error(), "NOTAKEY") {
			t.Errorf("the error %q quotes the key file", err)
		}
	}
	if _, err := seal.Seal("age1notakey", quiz, "a"); err == nil {
		t.Error("Seal to a malformed recipient succeeded")
	}
}

func FuzzOpen(f *testing.F) {
	k, err := seal.Generate()
	if err != nil {
		f.Fatal(err)
	}
	good, _ := seal.Seal(k.Recipient(), quiz, "a")
	f.Add(good)
	f.Add(seal.Header + "\n\n-----END AGE ENCRYPTED FILE-----")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		k.Open(quiz, s) // must not panic or hang
		seal.Check(s)
	})
}
