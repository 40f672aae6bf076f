package credential

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestCanonicalMatchesJSONGold: canonicalising from the contexts processed
// once, with IRIs checked once, gives exactly what json-gold's own path
// gives, for what the registry signs and for documents that take
// json-gold's conversion (numbers, booleans, lists, JSON and language
// literals) or have statements it drops (an IRI it finds invalid).
func TestCanonicalMatchesJSONGold(t *testing.T) {
	i := testIssuer(t, 1)
	bare := testPass()
	bare.Score, bare.MaxScore, bare.PassingScore, bare.ExpiresAt = nil, nil, nil, time.Time{}
	withStatus := testPass()
	withStatus.Status = Entry(func(n int64) string {
		return fmt.Sprintf("https://registry.example:8443/api/v1/credentials/status/%d", n)
	}, 7)
	imported := testPass()
	imported.Provenance, imported.ProvenanceSource = "imported", "safemolt"
	signed, err := i.Issue(testPass())
	if err != nil {
		t.Fatal(err)
	}
	proof := signed["proof"].(map[string]any)
	config := map[string]any{"@context": signed["@context"]}
	for k, v := range proof {
		if k != "proofValue" {
			config[k] = v
		}
	}
	list := unsigned(t, must(i.StatusList("https://registry.example:8443/api/v1/credentials/status/revocation/0", []int64{1, 5}, passedAt)))
	vc := []any{ContextVC}
	docs := map[string]map[string]any{
		"badge with score and expiry": i.Badge(testPass()),
		"badge without score":         i.Badge(bare),
		"badge with status":           i.Badge(withStatus),
		"imported badge":              i.Badge(imported),
		"proof options":               config,
		"DID document":                i.DIDDocument(),
		"status list":                 list,
		"attestation":                 unsigned(t, must(i.Attest("https://registry.example:8443/agents/ada", "https://b.example/agents/ada", "did:web:b.example", passedAt))),
		"one context as a string":     {"@context": ContextVC, "id": "urn:x", "type": "VerifiableCredential", "issuer": "did:web:x", "credentialSubject": map[string]any{"id": "urn:y"}},
		"numbers and booleans":        {"@context": vc, "id": "urn:x", "https://example.org/n": []any{1.0, 2.5, true}},
		"a list":                      {"@context": vc, "id": "urn:x", "https://example.org/l": map[string]any{"@list": []any{"a", "b"}}},
		"a JSON literal":              {"@context": vc, "id": "urn:x", "https://example.org/j": map[string]any{"@type": "@json", "@value": map[string]any{"b": 1.0, "a": "x"}}},
		"language strings":            {"@context": vc, "id": "urn:x", "name": map[string]any{"@value": "Ada", "@language": "en"}, "description": map[string]any{"@value": "x", "@language": "not a tag!"}},
		"an invalid http IRI":         {"@context": vc, "id": "urn:x", "https://example.org/p": map[string]any{"@id": "http://exa mple.org/x"}, "https://exa mple.org/q": "dropped", "https://example.org/r": "kept"},
		"blank nodes":                 {"@context": vc, "id": "urn:x", "https://example.org/p": []any{map[string]any{"https://example.org/n": "a"}, map[string]any{"https://example.org/n": "b", "https://example.org/m": "c"}}},
		"a named graph":               {"@context": vc, "id": "urn:x", "https://example.org/g": map[string]any{"@graph": map[string]any{"id": "urn:y", "https://example.org/n": "in a graph"}}},
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			want, err := canonicalFull(doc)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second from the kept context and IRIs
				got, err := canonical(doc)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("canonical =\n%s\nwant\n%s", got, want)
				}
			}
		})
	}
}

// unsigned is a signed document without its proof.
func unsigned(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, v := range doc {
		if k != "proof" {
			out[k] = v
		}
	}
	return out
}

// TestCanonicalRefusesUndefinedTerms: a property no context defines is
// refused on both paths, at the top and inside a type-scoped context.
func TestCanonicalRefusesUndefinedTerms(t *testing.T) {
	i := testIssuer(t, 1)
	nested := i.Badge(testPass())
	nested["credentialSubject"].(map[string]any)["achievement"].(map[string]any)["notInAnyContext"] = "x"
	for name, doc := range map[string]map[string]any{
		"top level":      {"@context": []any{ContextVC, ContextOB}, "id": "urn:x", "type": []any{"VerifiableCredential"}, "notInAnyContext": "dropped"},
		"in the subject": nested,
	} {
		t.Run(name, func(t *testing.T) {
			for range 2 {
				if _, err := canonical(doc); !errors.Is(err, ErrUndefinedTerm) {
					t.Errorf("canonical: %v, want ErrUndefinedTerm", err)
				}
			}
			if _, err := canonicalFull(doc); !errors.Is(err, ErrUndefinedTerm) {
				t.Errorf("canonicalFull: %v, want ErrUndefinedTerm", err)
			}
		})
	}
}

// TestCanonicalRefusesUnknownContexts: a context that is not embedded
// takes json-gold's path, which refuses it, and nothing is kept for it.
func TestCanonicalRefusesUnknownContexts(t *testing.T) {
	for name, ctx := range map[string]any{
		"unknown URL":        []any{ContextVC, "https://evil.example/context.json"},
		"inline context":     []any{ContextVC, map[string]any{"x": "https://evil.example/x"}},
		"unknown URL string": "https://evil.example/context.json",
	} {
		t.Run(name, func(t *testing.T) {
			doc := map[string]any{"@context": ctx, "id": "urn:x", "type": "VerifiableCredential"}
			if _, ok, err := processedContext(ctx); ok || err != nil {
				t.Errorf("processedContext = %v, %v; want not kept, no error", ok, err)
			}
			if name != "inline context" {
				if _, err := canonical(doc); err == nil {
					t.Error("canonicalised a document with an unknown context")
				}
			}
		})
	}
}

// TestCanonicalConcurrent: the shared active contexts and the kept IRIs
// are safe to use at once (run with -race).
func TestCanonicalConcurrent(t *testing.T) {
	i := testIssuer(t, 1)
	want, err := canonicalFull(i.Badge(testPass()))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got, err := canonical(i.Badge(testPass()))
			if err == nil && got != want {
				err = fmt.Errorf("got %q", got)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestCanonicalProofOptions: proof options canonicalised from the kept
// form with the date put in give what canonicalising them in full gives,
// for several dates, keys and context lists, and for options that are
// canonicalised in full (another property, a date written otherwise).
func TestCanonicalProofOptions(t *testing.T) {
	options := func(ctx any, vm, created string) map[string]any {
		return map[string]any{"@context": ctx, "type": ProofType, "cryptosuite": Cryptosuite, "proofPurpose": AssertionMethod,
			"verificationMethod": vm, "created": created}
	}
	badge := []any{ContextVC, ContextOB}
	imported := []any{ContextVC, ContextOB, ContextCredential}
	withNonce := options(badge, "did:web:a.example#key-1", "2026-11-24T10:00:00Z")
	withNonce["nonce"] = "n"
	docs := map[string]map[string]any{
		"badge":                 options(badge, "did:web:a.example#key-1", "2026-11-24T10:00:00Z"),
		"badge, another date":   options(badge, "did:web:a.example#key-1", "1999-12-31T23:59:59Z"),
		"badge, another key":    options(badge, "did:web:b.example%3A8443#key-2", "2026-01-02T03:04:05Z"),
		"imported badge":        options(imported, "did:web:a.example#key-1", "2030-06-30T12:00:00Z"),
		"VC context alone":      options(ContextVC, "did:web:a.example#key-1", "2026-11-24T10:00:00Z"),
		"a date with an offset": options(badge, "did:web:a.example#key-1", "2026-11-24T10:00:00+01:00"),
		"a nonce":               withNonce,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			want, err := canonicalFull(doc)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second from the kept form
				got, err := canonicalProofOptions(doc)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("got\n%s\nwant\n%s", got, want)
				}
			}
		})
	}
}
