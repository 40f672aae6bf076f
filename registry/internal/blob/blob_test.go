package blob

import (
	"bytes"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, in := range [][]byte{nil, {}, []byte(`{"action":"opened"}`), bytes.Repeat([]byte(`{"a":1}`), 10000)} {
		out, err := Decompress(Compress(in))
		if err != nil || !bytes.Equal(out, in) {
			t.Errorf("round trip of %d bytes: %d bytes, %v", len(in), len(out), err)
		}
	}
	if out, err := Decompress([]byte(`{"raw":true}`)); err != nil || string(out) != `{"raw":true}` {
		t.Errorf("an uncompressed value: %q, %v", out, err)
	}
	if _, err := Decompress([]byte{0x1f, 0x8b, 0, 1, 2}); err == nil {
		t.Error("a corrupt value decompressed")
	}
}

func FuzzDecompress(f *testing.F) {
	f.Add(Compress([]byte(`{"a":1}`)))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := Decompress(b)
		if err == nil && len(out) > Max {
			t.Fatal("over the limit")
		}
	})
}
