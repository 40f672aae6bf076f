package registry_test

import (
	"testing"

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
