package credential

import (
	"encoding/json"
	"fmt"
	"testing"
)

// mutations returns every variant of doc with one change: each value
// anywhere in it (in objects and arrays, nested) replaced by another of
// its kind, and a property added to each object. Each comes with where
// and what it changed.
func mutations(doc any) map[string]any {
	out := map[string]any{}
	var walk func(path string, v any, set func(any) any)
	walk = func(path string, v any, set func(any) any) {
		switch v := v.(type) {
		case map[string]any:
			added := clone(v).(map[string]any)
			added["addedProperty"] = "added"
			out[path+" +addedProperty"] = set(added)
			for k, e := range v {
				walk(path+"."+k, e, func(nv any) any {
					c := clone(v).(map[string]any)
					c[k] = nv
					return set(c)
				})
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e, func(nv any) any {
					c := clone(v).([]any)
					c[i] = nv
					return set(c)
				})
			}
			out[path+" +element"] = set(append(clone(v).([]any), "https://evil.example/x"))
		case string:
			out[path+" changed"] = set(v + "x")
		case float64:
			out[path+" changed"] = set(v + 1)
		case bool:
			out[path+" changed"] = set(!v)
		}
	}
	walk("", doc, func(v any) any { return v })
	return out
}

func clone(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

// TestEveryChangeToACredentialFails: a credential verifies as issued, and
// no longer after any one change anywhere in it: a value mutated, an
// element added to a list, a property added to any object (top level,
// issuer, subject, achievement, result, evidence, status, proof).
func TestEveryChangeToACredentialFails(t *testing.T) {
	i := testIssuer(t, 1)
	listURL := func(int64) string { return "https://registry.example:8443/api/v1/credentials/status/revocation/0" }
	p := testPass()
	p.Status = Entry(listURL, 3)
	list, _ := json.Marshal(must(i.StatusList(listURL(0), nil, passedAt)))
	src := listSource{listURL(0): list}
	var doc map[string]any
	b, _ := json.Marshal(must(i.Issue(p)))
	json.Unmarshal(b, &doc)
	if r := Verify(b, i, src, passedAt); !r.Verified {
		t.Fatalf("the credential as issued: %+v", r.Checks)
	}
	ms := mutations(doc)
	if len(ms) < 60 {
		t.Fatalf("only %d mutations of a credential", len(ms))
	}
	for name, m := range ms {
		raw, _ := json.Marshal(m)
		if r := Verify(raw, i, src, passedAt); r.Verified {
			t.Errorf("%s: still verifies", name)
		}
	}
}

// TestEveryChangeToAnAttestationFails: an attestation verifies as signed,
// and no longer after any one change anywhere in it, its holder and
// audience included.
func TestEveryChangeToAnAttestationFails(t *testing.T) {
	i := testIssuer(t, 1)
	const subject, holder, audience = "https://registry.example:8443/agents/ada", "https://b.example/agents/ada", "did:web:b.example"
	att := must(i.Attest(subject, holder, audience, passedAt))
	b, _ := json.Marshal(att)
	if err := VerifyAttestation(b, i, i.DID, subject, holder, audience, passedAt); err != nil {
		t.Fatalf("the attestation as signed: %v", err)
	}
	var doc map[string]any
	json.Unmarshal(b, &doc)
	ms := mutations(doc)
	if len(ms) < 20 {
		t.Fatalf("only %d mutations of an attestation", len(ms))
	}
	for name, m := range ms {
		raw, _ := json.Marshal(m)
		// The verifier is asked about what the changed attestation says,
		// so only the signature and the format can refuse it.
		s, _ := m.(map[string]any)["credentialSubject"].(map[string]any)
		sub, _ := s["id"].(string)
		h, _ := s["holder"].(string)
		a, _ := s["audience"].(string)
		if err := VerifyAttestation(raw, i, i.DID, sub, h, a, passedAt); err == nil {
			t.Errorf("%s: still verifies", name)
		}
	}
}
