package evaluation

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
)

// jsonPoAWHash is the definition PoAWHash implements, written plainly:
// the SHA-256 of the sorted values' JSON followed by the nonce.
func jsonPoAWHash(values []int, nonce string) string {
	sorted := slices.Sorted(slices.Values(values))
	b, _ := json.Marshal(sorted)
	if sorted == nil {
		b = []byte("[]")
	}
	sum := sha256.Sum256(append(b, nonce...))
	return hex.EncodeToString(sum[:])
}

func TestPoAWHash(t *testing.T) {
	example := sha256.Sum256([]byte("[1,2,3]n"))
	many := make([]int, 3*PoAWValues) // more values than a challenge has: still right
	for i := range many {
		many[i] = len(many) - i
	}
	for _, tc := range []struct {
		name   string
		values []int
		nonce  string
		want   string
	}{
		{"the documented example", []int{3, 1, 2}, "n", hex.EncodeToString(example[:])},
		{"no values", nil, "n", jsonPoAWHash(nil, "n")},
		{"negative and wide", []int{-7, 9999, 0, 1 << 40}, "nonce", jsonPoAWHash([]int{-7, 9999, 0, 1 << 40}, "nonce")},
		{"more values than a challenge", many, "n", jsonPoAWHash(many, "n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PoAWHash(tc.values, tc.nonce); got != tc.want {
				t.Errorf("PoAWHash = %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("random challenges", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for range 1000 {
			values := make([]int, PoAWValues)
			for i := range values {
				values[i] = r.IntN(10000)
			}
			if got, want := PoAWHash(values, "abc"), jsonPoAWHash(values, "abc"); got != want {
				t.Fatalf("PoAWHash(%v) = %s, want %s", values, got, want)
			}
		}
	})
	t.Run("leaves the values unsorted", func(t *testing.T) {
		values := []int{3, 1, 2}
		PoAWHash(values, "n")
		if !slices.Equal(values, []int{3, 1, 2}) {
			t.Errorf("values = %v after hashing, want [3 1 2]", values)
		}
	})
}

// jsonDigest is the definition digestInput implements.
func jsonDigest(key []byte, v any) string {
	b, _ := json.Marshal(v)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

func TestDigestInputIsTheJSONsDigest(t *testing.T) {
	key := []byte("k")
	for _, v := range []any{
		"", "abc", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		`say "hi"`, `back\slash`, "<script>", "a&b", "tab\there", "é", "\x7f", "\u2028",
		42, 1.5, true, nil, []string{"a", "b"}, map[string]int{"b": 2, "a": 1},
	} {
		if got, want := digestInput(key, v), jsonDigest(key, v); got != want {
			t.Errorf("digestInput(%#v) = %s, want %s", v, got, want)
		}
	}
}

func FuzzDigestInput(f *testing.F) {
	for _, s := range []string{"", "abc", `"`, `\`, "<>&", "\x00", "\x7f", "é", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := digestInput([]byte("k"), s), jsonDigest([]byte("k"), s); got != want {
			t.Errorf("digestInput(%q) = %s, want %s", s, got, want)
		}
	})
}
