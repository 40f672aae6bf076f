package registry_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
)

func FuzzParse(f *testing.F) {
	for _, file := range readCorpus(f) {
		f.Add(file.Content)
	}
	f.Add([]byte(validSIP))
	f.Add([]byte(aliasBomb()))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		doc := registry.Parse("evaluations/SIP-1.md", content)
		for _, p := range doc.Problems {
			if _, ok := registry.RuleByID(p.Rule); !ok || p.Line < 1 || p.Message == "" {
				t.Fatalf("bad problem %+v", p)
			}
		}
	})
}

func FuzzValidate(f *testing.F) {
	corpus := readCorpus(f)
	for i := 0; i+1 < len(corpus); i += 2 {
		f.Add(corpus[i].Content, corpus[i+1].Content, corpus[i].Content)
	}
	f.Add([]byte(validSIP), []byte(validSIP), []byte(validSIP))
	f.Fuzz(func(t *testing.T, a, b, base []byte) {
		docs := registry.ParseFiles([]registry.File{
			{Path: "evaluations/SIP-1.md", Content: a},
			{Path: "evaluations/SIP-2.md", Content: b},
		})
		snap := &registry.Snapshot{Name: "base", Docs: registry.ParseFiles([]registry.File{{Path: "evaluations/SIP-1.md", Content: base}})}
		ps := registry.Validate(docs, registry.Options{Base: snap, Claimed: map[int]string{1: "x", 2: "y"}})
		for i := 1; i < len(ps); i++ {
			if ps[i].Path < ps[i-1].Path {
				t.Fatalf("problems out of order: %v", ps)
			}
		}
	})
}

// FuzzCursor: a result-listing cursor comes from the client. Decoding
// anything either fails with ErrInvalid or yields a position that encodes
// back to a cursor meaning the same position.
func FuzzCursor(f *testing.F) {
	f.Add(registry.EncodeCursor(time.Date(2026, 11, 22, 1, 2, 3, 4, time.UTC), "res_1"))
	f.Add("")
	f.Add("fA")
	f.Add("MjAyNi0xMS0yMlQwMTowMjowM1p8")
	f.Fuzz(func(t *testing.T, c string) {
		at, id, err := registry.DecodeCursor(c)
		if err != nil {
			if !errors.Is(err, registry.ErrInvalid) {
				t.Fatalf("DecodeCursor(%q) = %v; want ErrInvalid", c, err)
			}
			return
		}
		at2, id2, err := registry.DecodeCursor(registry.EncodeCursor(at, id))
		if err != nil || !at2.Equal(at) || id2 != id {
			t.Fatalf("cursor %q → (%v, %q) does not round-trip: (%v, %q, %v)", c, at, id, at2, id2, err)
		}
	})
}

// FuzzKeyID: the Authorization header is the client's. KeyID accepts only
// keys shaped like ours, and the id it returns is the key's own.
func FuzzKeyID(f *testing.F) {
	f.Add("sip_0123456789ab_" + strings.Repeat("s", 43))
	f.Add("sip__")
	f.Add("Bearer sip_x")
	f.Add("safemolt_0123456789abcdefghijklmnop")
	f.Fuzz(func(t *testing.T, key string) {
		id := registry.KeyID(key)
		if id == "" {
			return
		}
		if strings.HasPrefix(key, registry.LegacyKeyPrefix) {
			if len(id) != 12 || !strings.HasPrefix(id, "sm") || id != registry.LegacyKeyID(key) {
				t.Fatalf("KeyID(%q) = %q, a SafeMolt key's id is derived", key, id)
			}
			return
		}
		if len(id) != 12 || !strings.HasPrefix(key, "sip_"+id+"_") || len(key) < len("sip_")+12+1+32 {
			t.Fatalf("KeyID(%q) = %q", key, id)
		}
	})
}
