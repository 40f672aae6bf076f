package seal_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry/seal"
)

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
		s, err := seal.Seal(k.Recipient(), "q1", answer)
		if err != nil {
			t.Fatal(err)
		}
		if err := seal.Check(s); err != nil {
			t.Errorf("Check of a fresh seal: %v", err)
		}
		got, err := k.Open("q1", s)
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
		s, err := seal.Seal(k.Recipient(), "prompt-injection", c)
		if err != nil {
			t.Fatal(err)
		}
		lengths[len(s)] = true
	}
	if len(lengths) != 1 {
		t.Errorf("sealed lengths %v, want one length for every choice", lengths)
	}
	a, _ := seal.Seal(k.Recipient(), "q", "same")
	b, _ := seal.Seal(k.Recipient(), "q", "same")
	if a == b {
		t.Error("sealing one answer twice gave one ciphertext: equal answers would show")
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	k := newKey(t)
	other := newKey(t)
	good, err := seal.Seal(k.Recipient(), "q1", "right")
	if err != nil {
		t.Fatal(err)
	}
	toOther, _ := seal.Seal(other.Recipient(), "q1", "right")
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
	for _, tt := range []struct {
		name, question, sealed, want string
	}{
		{"another key", "q1", toOther, "not sealed to this registry's key"},
		{"another question", "q2", good, `sealed for question "q1"`},
		{"tampered", "q1", tampered, "decrypt"},
		{"not armored", "q1", "right", "ASCII-armored age file"},
		{"armor of garbage", "q1", seal.Header + "\nAAAA\n-----END AGE ENCRYPTED FILE-----", "not a valid age file"},
		{"too large", "q1", strings.Repeat("A", seal.MaxSealed+1), "at most"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := k.Open(tt.question, tt.sealed)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open = %q, %v; want an error containing %q", got, err, tt.want)
			}
			if strings.Contains(err.Error(), "right") {
				t.Errorf("the error %q quotes the answer", err)
			}
		})
	}
}

// TestKeyFile: a key file round-trips, keeps older identities after a
// rotation (answers sealed to them still open), and a bad file is refused
// without quoting it.
func TestKeyFile(t *testing.T) {
	t.Parallel()
	old := newKey(t)
	sealedOld, _ := seal.Seal(old.Recipient(), "q", "kept")
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
	if got, err := rotated.Open("q", sealedOld); err != nil || got != "kept" {
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
	if _, err := seal.Seal("age1notakey", "q", "a"); err == nil {
		t.Error("Seal to a malformed recipient succeeded")
	}
}

func FuzzOpen(f *testing.F) {
	k, err := seal.Generate()
	if err != nil {
		f.Fatal(err)
	}
	good, _ := seal.Seal(k.Recipient(), "q", "a")
	f.Add(good)
	f.Add(seal.Header + "\n\n-----END AGE ENCRYPTED FILE-----")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		k.Open("q", s) // must not panic or hang
		seal.Check(s)
	})
}
