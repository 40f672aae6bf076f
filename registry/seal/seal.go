// Package seal keeps benchmark answer keys out of public SIP files.
//
// A contributor encrypts each answer to the registry's public key (an age
// X25519 recipient, "age1…"); the SIP file holds the ASCII-armored age
// file in place of the answer. Only the registry, holding the private key
// (an age identity file, SIP_SEALING_KEY_FILE), opens it to grade. The
// format is plain age (age-encryption.org/v1), so `age -d -i KEY` opens a
// sealed answer too.
//
// What is sealed is a small JSON document: the answer and a digest of
// what it was sealed for (its Binding: the SIP's number and id, the
// question's id, prompt and choices as written), padded with spaces to a
// multiple of Block bytes, so a ciphertext's length says nothing about
// which choice it holds. Key.Open refuses a sealed answer whose binding
// is not the one it is asked to open for: a block copied to another SIP
// or question, or left under an edited prompt or edited choices, does
// not open at all, whatever it holds.
//
// age has no associated data, so the binding travels inside the payload.
// That is as strong: age's payload is authenticated (ChaCha20-Poly1305
// under a file key that only the sealer and the key's holder can derive,
// the header MAC-ed with it), so nobody else can change a byte of the
// binding without the block failing to decrypt; and, unlike a key
// derived per SIP, the registry keeps one key and the format stays plain
// age, which `age -d` still opens.
package seal

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
)

// Block is the size the sealed plaintext is padded to a multiple of.
const Block = 256

// MaxSealed caps an armored sealed answer (an answer of up to a few KiB).
const MaxSealed = 16 << 10

// Header starts every sealed answer.
const Header = armor.Header

// format is the version of what a sealed answer holds; answers sealed
// before their binding was (version 0, no "v") no longer open.
const format = 2

// sealed is what a sealed answer holds.
type sealed struct {
	V        int    `json:"v,omitempty"`
	SIP      int    `json:"sip,omitempty"`
	Question string `json:"question"`
	Bound    string `json:"bound,omitempty"`
	Answer   string `json:"answer"`
}

// Binding is what an answer is sealed for: a SIP (its number and id) and
// one of its questions as written (id, prompt, choices in their order).
// A sealed answer opens only for the binding it was sealed with.
type Binding struct {
	SIP      int
	ID       string
	Question string
	Prompt   string
	Choices  []string
}

// digest is the binding's SHA-256, over a JSON array (unambiguous for any
// strings), base64url.
func (b Binding) digest() string {
	choices := b.Choices
	if choices == nil {
		choices = []string{}
	}
	enc, _ := json.Marshal([]any{"sip-sealed-answer", b.SIP, b.ID, b.Question, b.Prompt, choices})
	sum := sha256.Sum256(enc)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// CheckRecipient reports whether s is an age X25519 public key.
func CheckRecipient(s string) error {
	if _, err := age.ParseX25519Recipient(strings.TrimSpace(s)); err != nil {
		return fmt.Errorf("recipient %q is not an age public key (age1…): %w", s, err)
	}
	return nil
}

// Seal encrypts the answer for the binding (a SIP's question as written)
// to the recipient ("age1…") and returns the armored age file.
func Seal(recipient string, b Binding, answer string) (string, error) {
	r, err := age.ParseX25519Recipient(strings.TrimSpace(recipient))
	if err != nil {
		return "", fmt.Errorf("recipient %q is not an age public key (age1…): %w", recipient, err)
	}
	plain, err := json.Marshal(sealed{V: format, SIP: b.SIP, Question: b.Question, Bound: b.digest(), Answer: answer})
	if err != nil {
		return "", err
	}
	if pad := Block - len(plain)%Block; pad < Block {
		plain = append(plain, bytes.Repeat([]byte{' '}, pad)...)
	}
	var out bytes.Buffer
	aw := armor.NewWriter(&out)
	w, err := age.Encrypt(aw, r)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(plain); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	if err := aw.Close(); err != nil {
		return "", err
	}
	return out.String(), nil
}

// Check reports whether s has the shape of a sealed answer: an armored
// age file of bounded size whose header parses. It needs no key, so
// `sip validate` runs it anywhere; only Key.Open says what it holds.
func Check(s string) error {
	if len(s) > MaxSealed {
		return fmt.Errorf("a sealed answer is at most %d KiB", MaxSealed>>10)
	}
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, armor.Header) || !strings.HasSuffix(t, armor.Footer) {
		return errors.New("a sealed answer is an ASCII-armored age file (" + armor.Header + " … " + armor.Footer + ")")
	}
	if _, err := age.ExtractHeader(armor.NewReader(strings.NewReader(t + "\n"))); err != nil {
		return fmt.Errorf("the sealed answer is not a valid age file: %v", err)
	}
	return nil
}

// Key is the registry's sealing key: one or more age X25519 identities,
// the first of which new answers are sealed to. Older identities stay in
// the file after a rotation so that SIPs sealed to them still open.
type Key struct {
	ids []*age.X25519Identity
}

// Generate makes a new key.
func Generate() (*Key, error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return nil, err
	}
	return &Key{ids: []*age.X25519Identity{id}}, nil
}

// ParseKey reads an age identity file: one AGE-SECRET-KEY-1… per line,
// blank lines and lines starting with # ignored. Errors never quote the
// file's content.
func ParseKey(text []byte) (*Key, error) {
	k := &Key{}
	for n, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, err := age.ParseX25519Identity(line)
		if err != nil {
			return nil, fmt.Errorf("line %d is not an age X25519 identity (AGE-SECRET-KEY-1…)", n+1)
		}
		k.ids = append(k.ids, id)
	}
	if len(k.ids) == 0 {
		return nil, errors.New("no age identity in the key file")
	}
	return k, nil
}

// LoadKeyFile reads a key file. Errors name the file, never its content.
func LoadKeyFile(path string) (*Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParseKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// Recipient is the public key new answers are sealed to.
func (k *Key) Recipient() string { return k.ids[0].Recipient().String() }

// Recipients are the public keys of every identity, newest first.
func (k *Key) Recipients() []string {
	out := make([]string, len(k.ids))
	for i, id := range k.ids {
		out[i] = id.Recipient().String()
	}
	return out
}

// File is the key as an identity file, for writing to disk.
func (k *Key) File() []byte {
	var b strings.Builder
	b.WriteString("# sip sealing key: the registry opens sealed benchmark answers with it. Keep it secret.\n")
	for _, id := range k.ids {
		fmt.Fprintf(&b, "# public key: %s\n%s\n", id.Recipient(), id)
	}
	return []byte(b.String())
}

// ErrNotBound is the error of a sealed answer that decrypts but was
// sealed for another SIP, another question, or other wording of its
// question (errors.Is).
var ErrNotBound = errors.New("it was not sealed for this question of this SIP as written")

// Open decrypts the sealed answer for the binding. It fails when the
// answer was sealed to another key, is damaged, or was sealed for another
// binding (ErrNotBound); errors never hold the answer.
func (k *Key) Open(b Binding, s string) (string, error) {
	if err := Check(s); err != nil {
		return "", err
	}
	ids := make([]age.Identity, len(k.ids))
	for i, id := range k.ids {
		ids[i] = id
	}
	r, err := age.Decrypt(armor.NewReader(strings.NewReader(strings.TrimSpace(s)+"\n")), ids...)
	if err != nil {
		var none *age.NoIdentityMatchError
		if errors.As(err, &none) {
			return "", errors.New("it was not sealed to this registry's key")
		}
		return "", fmt.Errorf("it does not decrypt: %v", err)
	}
	plain, err := io.ReadAll(io.LimitReader(r, MaxSealed))
	if err != nil {
		return "", fmt.Errorf("it does not decrypt: %v", err)
	}
	var got sealed
	dec := json.NewDecoder(bytes.NewReader(plain))
	if err := dec.Decode(&got); err != nil || strings.TrimSpace(string(plain[dec.InputOffset():])) != "" {
		return "", errors.New("it decrypts, but not to a sealed answer (seal it with `sip seal`)")
	}
	switch {
	case got.V != format || got.Bound == "":
		return "", errors.New("it was sealed before sealed answers were bound to their SIP and question (seal it again with `sip seal`)")
	case got.Bound != b.digest():
		return "", notBound(got, b)
	}
	return got.Answer, nil
}

// notBound says which part of the binding differs, as far as the payload
// tells (the SIP's number and the question's id are in it; the rest only
// as a digest).
func notBound(got sealed, b Binding) error {
	switch {
	case got.SIP != b.SIP:
		return fmt.Errorf("%w: it was sealed for SIP-%d", ErrNotBound, got.SIP)
	case got.Question != b.Question:
		return fmt.Errorf("%w: it was sealed for question %q", ErrNotBound, got.Question)
	}
	return fmt.Errorf("%w: the SIP's id, the question's prompt or its choices changed since it was sealed", ErrNotBound)
}
