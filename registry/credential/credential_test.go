package credential

import (
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func testIssuer(t testing.TB, seeds ...byte) *Issuer {
	t.Helper()
	var keys []Key
	for _, s := range seeds {
		k, err := KeyFromSeed([]byte(strings.Repeat(string(rune('a'+s)), ed25519.SeedSize)))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	i, err := NewIssuer("https://registry.example:8443", "SIP Registry", keys)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

var passedAt = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func testPass() Pass {
	score, max, passing := 90.0, 100.0, 70.0
	return Pass{CredentialURL: "https://registry.example:8443/api/v1/results/r1/credential", ResultURL: "https://registry.example:8443/results/r1",
		TraceURL: "https://registry.example:8443/api/v1/results/r1/trace", Agent: "ada", AgentURL: "https://registry.example:8443/agents/ada",
		EvaluationURL: "https://registry.example:8443/evaluations/poaw", EvaluationID: "poaw", Number: 2, Name: "Proof of Agentic Work",
		Description: "Fetch, sort, hash and submit.", Criteria: "A correct hash within 15 seconds.", Version: "1.0.0",
		ContentSHA256: strings.Repeat("ab", 32), Score: &score, MaxScore: &max, PassingScore: &passing,
		PassedAt: passedAt, ExpiresAt: passedAt.AddDate(1, 0, 0)}
}

func issued(t testing.TB, i *Issuer) []byte {
	t.Helper()
	c, err := i.Issue(testPass())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDIDWeb(t *testing.T) {
	for in, want := range map[string]string{
		"https://registry.example":          "did:web:registry.example",
		"http://localhost:8080/":            "did:web:localhost%3A8080",
		"https://example.org/sip/registry/": "did:web:example.org:sip:registry",
	} {
		if got, err := DIDWeb(in); err != nil || got != want {
			t.Errorf("DIDWeb(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := DIDWeb("/relative"); err == nil {
		t.Error("a relative URL has a did:web")
	}
}

func TestIssueIsDeterministicAndVerifies(t *testing.T) {
	i := testIssuer(t, 1)
	a, b := issued(t, i), issued(t, i)
	if string(a) != string(b) {
		t.Error("the same pass gave two credentials")
	}
	r := Verify(a, i, nil, passedAt.Add(time.Hour))
	if !r.Verified {
		t.Fatalf("our own credential does not verify: %+v", r)
	}
	if r.Issuer != "did:web:registry.example%3A8443" || r.Subject != "https://registry.example:8443/agents/ada" {
		t.Errorf("report names %q and %q", r.Issuer, r.Subject)
	}
}

// TestVerifyNamesTheCheckThatFails: tampering, another key, the wrong
// time, a bad document: each is refused by the check it breaks.
func TestVerifyNamesTheCheckThatFails(t *testing.T) {
	i := testIssuer(t, 1)
	good := issued(t, i)
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		json.Unmarshal(good, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	other := testIssuer(t, 2)
	forged, _ := json.Marshal(must(other.Issue(testPass())))
	for _, tc := range []struct {
		name string
		raw  []byte
		at   time.Time
		want string
	}{
		{"a changed score", edit(func(m map[string]any) {
			m["credentialSubject"].(map[string]any)["result"].([]any)[0].(map[string]any)["value"] = "100"
		}), passedAt, "signature"},
		{"another subject", edit(func(m map[string]any) {
			m["credentialSubject"].(map[string]any)["id"] = "https://registry.example:8443/agents/eve"
		}), passedAt, "signature"},
		{"a later expiry", edit(func(m map[string]any) { m["validUntil"] = "2099-01-01T00:00:00Z" }), passedAt, "signature"},
		{"a field added", edit(func(m map[string]any) { m["awardedDate"] = "2026-01-01T00:00:00Z" }), passedAt, "signature"},
		{"signed by an unknown key", forged, passedAt, "issuer key"},
		{"another issuer's key named", edit(func(m map[string]any) {
			m["proof"].(map[string]any)["verificationMethod"] = "did:web:evil.example#key-1"
		}), passedAt, "issuer"},
		{"expired", good, passedAt.AddDate(2, 0, 0), "validity"},
		{"not yet valid", good, passedAt.Add(-time.Hour), "validity"},
		{"not yet valid beyond the clock skew", good, passedAt.Add(-ClockSkew - time.Second), "validity"},
		{"not JSON", []byte("{"), passedAt, "format"},
		{"an unknown context", edit(func(m map[string]any) { m["@context"] = []any{ContextVC, "https://evil.example/ctx.json"} }), passedAt, "format"},
		{"no proof", edit(func(m map[string]any) { delete(m, "proof") }), passedAt, "format"},
		{"another cryptosuite", edit(func(m map[string]any) { m["proof"].(map[string]any)["cryptosuite"] = "eddsa-jcs-2022" }), passedAt, "proof"},
		{"a malformed signature", edit(func(m map[string]any) { m["proof"].(map[string]any)["proofValue"] = "zzz" }), passedAt, "proof"},
		{"oversized", append(good[:len(good)-1], []byte(`,"x":"`+strings.Repeat("a", MaxSize)+`"}`)...), passedAt, "format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Verify(tc.raw, i, nil, tc.at)
			if r.Verified || r.Failed() != tc.want {
				t.Errorf("verified %v, failed %q, want %q: %+v", r.Verified, r.Failed(), tc.want, r.Checks)
			}
		})
	}
}

// TestRotatedKeysStillVerify: after a new key is appended, credentials
// signed by the old one still verify and new ones are signed by the new.
func TestRotatedKeysStillVerify(t *testing.T) {
	old := issued(t, testIssuer(t, 1))
	rotated := testIssuer(t, 1, 2)
	if r := Verify(old, rotated, nil, passedAt); !r.Verified {
		t.Errorf("an old credential fails after rotation: %+v", r.Checks)
	}
	if vm := rotated.Signer().VerificationMethod; !strings.HasSuffix(vm, rotated.Keys[1].ID) {
		t.Errorf("signing with %s, want the newest key", vm)
	}
	if n := len(rotated.DIDDocument()["assertionMethod"].([]any)); n != 2 {
		t.Errorf("the DID document lists %d keys, want both", n)
	}
}

func TestParseKeys(t *testing.T) {
	k := testIssuer(t, 1).Keys[0]
	pemKey, err := EncodeKey(k)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ParseKeys(append(append([]byte{}, pemKey...), pemKey...))
	if err != nil || len(keys) != 2 || keys[0].ID != k.ID {
		t.Fatalf("ParseKeys = %v, %v", keys, err)
	}
	for _, bad := range []string{"", "not pem", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"} {
		if _, err := ParseKeys([]byte(bad)); err == nil {
			t.Errorf("ParseKeys(%q) accepted", bad)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func BenchmarkVerify(b *testing.B) {
	i := testIssuer(b, 1)
	raw := issued(b, i)
	for b.Loop() {
		if r := Verify(raw, i, nil, passedAt); !r.Verified {
			b.Fatal(r.Checks)
		}
	}
}

func TestDIDWebURL(t *testing.T) {
	for did, want := range map[string]string{
		"did:web:registry.example":         "https://registry.example/.well-known/did.json",
		"did:web:registry.example%3A8443":  "https://registry.example:8443/.well-known/did.json",
		"did:web:example.org:sip:registry": "https://example.org/sip/registry/did.json",
		"did:web:127.0.0.1%3A9000":         "http://127.0.0.1:9000/.well-known/did.json",
		"did:web:localhost":                "http://localhost/.well-known/did.json",
		"did:web:evil.example%2F..%2Fx":    "",
		"did:web:example.org:..":           "",
		"did:key:z6Mk":                     "",
		"did:web:":                         "",
		"did:web:user%40evil.example":      "",
	} {
		got, err := DIDWebURL(did)
		if (want == "") != (err != nil) || got != want {
			t.Errorf("DIDWebURL(%q) = %q, %v; want %q", did, got, err, want)
		}
	}
}

// TestStatusFailsClosed: a credential with a status entry whose list
// cannot be fetched, is on another site, or is not the issuer's, is not
// verified.
func TestStatusFailsClosed(t *testing.T) {
	i := testIssuer(t, 1)
	listURL := func(int64) string { return "https://registry.example:8443/api/v1/credentials/status/revocation/0" }
	p := testPass()
	p.Status = Entry(listURL, 3)
	raw, _ := json.Marshal(must(i.Issue(p)))
	good, _ := json.Marshal(must(i.StatusList(listURL(0), nil, passedAt)))
	foreign, _ := json.Marshal(must(testIssuer(t, 2).StatusList(listURL(0), nil, passedAt)))
	later, _ := json.Marshal(must(i.StatusList(listURL(0), nil, passedAt.Add(2*time.Second))))
	elsewhere := p
	elsewhere.Status = Entry(func(int64) string { return "https://evil.example/list" }, 3)
	rawElsewhere, _ := json.Marshal(must(i.Issue(elsewhere)))
	for _, tc := range []struct {
		name string
		raw  []byte
		src  StatusSource
		want bool
	}{
		{"the list is served", raw, listSource{listURL(0): good}, true},
		{"a list signed a moment after the verifier took the time", raw, listSource{listURL(0): later}, true},
		{"no source", raw, nil, false},
		{"the list cannot be fetched", raw, listSource{}, false},
		{"another issuer's list", raw, listSource{listURL(0): foreign}, false},
		{"a list on another site", rawElsewhere, listSource{"https://evil.example/list": good}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Verify(tc.raw, i, tc.src, passedAt)
			if r.Verified != tc.want || (!tc.want && r.Failed() != "status") {
				t.Errorf("verified %v (failed %q), want %v: %+v", r.Verified, r.Failed(), tc.want, r.Checks)
			}
		})
	}
}

// TestCachedStatusSeesChangesAfterItsTTL: a cached list is served until
// its TTL passes, then fetched again.
func TestCachedStatusSeesChangesAfterItsTTL(t *testing.T) {
	now := passedAt
	src := listSource{"u": []byte("one")}
	c := &CachedStatus{Source: src, TTL: time.Minute, Now: func() time.Time { return now }}
	if b, _ := c.StatusList("u"); string(b) != "one" {
		t.Fatal(string(b))
	}
	src["u"] = []byte("two")
	if b, _ := c.StatusList("u"); string(b) != "one" {
		t.Errorf("within the TTL: %s", b)
	}
	now = now.Add(time.Minute)
	if b, _ := c.StatusList("u"); string(b) != "two" {
		t.Errorf("after the TTL: %s", b)
	}
}

func TestVerifyAttestation(t *testing.T) {
	i := testIssuer(t, 1)
	const subject, holder, audience = "https://registry.example:8443/agents/ada", "https://b.example/agents/ada", "did:web:b.example"
	att, _ := json.Marshal(must(i.Attest(subject, holder, audience, passedAt)))
	for _, tc := range []struct {
		name                      string
		subject, holder, audience string
		at                        time.Time
		ok                        bool
	}{
		{"as signed", subject, holder, audience, passedAt.Add(time.Minute), true},
		{"another subject", "https://registry.example:8443/agents/eve", holder, audience, passedAt, false},
		{"another holder", subject, "https://b.example/agents/eve", audience, passedAt, false},
		{"another audience", subject, holder, "did:web:c.example", passedAt, false},
		{"expired", subject, holder, audience, passedAt.Add(AttestationLifetime), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyAttestation(att, i, i.DID, tc.subject, tc.holder, tc.audience, tc.at)
			if (err == nil) != tc.ok {
				t.Errorf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	if err := VerifyAttestation(att, testIssuer(t, 2), i.DID, subject, holder, audience, passedAt); err == nil {
		t.Error("an attestation verified with another issuer's keys")
	}
}

func BenchmarkSignBare(b *testing.B) {
	k := testIssuer(b, 1).Keys[0].Private
	msg := make([]byte, 64)
	for b.Loop() {
		ed25519.Sign(k, msg)
	}
}

// BenchmarkVerifyWithStatus verifies a credential with a status entry
// against a warm (in-memory) status list, whose own proof is verified too.
func BenchmarkVerifyWithStatus(b *testing.B) {
	i := testIssuer(b, 1)
	listURL := func(int64) string { return "https://registry.example:8443/api/v1/credentials/status/revocation/0" }
	p := testPass()
	p.Status = Entry(listURL, 3)
	raw, _ := json.Marshal(must(i.Issue(p)))
	list, _ := json.Marshal(must(i.StatusList(listURL(0), []int64{1, 2, 4}, passedAt)))
	src := listSource{listURL(0): list}
	for b.Loop() {
		if r := Verify(raw, i, src, passedAt); !r.Verified {
			b.Fatal(r.Checks)
		}
	}
}

// rememberingSource serves one list at a time and remembers the lists it
// served, as a verifier's WebStatus does.
type rememberingSource struct {
	list []byte
	ListMemory
}

func (r *rememberingSource) StatusList(string) ([]byte, error) { return r.list, nil }

// TestStatusListsAreNotReplayed: a list older than one the verifier has
// seen is refused (a replay from before a revocation), a list says until
// when it is valid and counts no longer, and one without that end is
// refused.
func TestStatusListsAreNotReplayed(t *testing.T) {
	i := testIssuer(t, 1)
	listURL := func(int64) string { return "https://registry.example:8443/api/v1/credentials/status/revocation/0" }
	p := testPass()
	p.Status = Entry(listURL, 3)
	raw, _ := json.Marshal(must(i.Issue(p)))
	before, _ := json.Marshal(must(i.StatusList(listURL(0), nil, passedAt)))
	revokedAt := passedAt.Add(StatusListWindow)
	after, _ := json.Marshal(must(i.StatusList(listURL(0), []int64{3}, revokedAt)))

	src := &rememberingSource{list: before}
	if r := Verify(raw, i, src, passedAt); !r.Verified {
		t.Fatalf("with the list before the revocation: %+v", r.Checks)
	}
	src.list = after
	if r := Verify(raw, i, src, revokedAt); r.Verified || !strings.Contains(r.Checks[len(r.Checks)-1].Detail, "revoked") {
		t.Fatalf("with the list after the revocation: %+v", r.Checks)
	}
	src.list = before
	if r := Verify(raw, i, src, revokedAt); r.Verified || !strings.Contains(r.Checks[len(r.Checks)-1].Detail, "older than one already seen") {
		t.Errorf("the list from before the revocation, replayed: %+v", r.Checks)
	}
	// A verifier that never saw the newer list: the old one counts only
	// until its end.
	if r := Verify(raw, i, listSource{listURL(0): before}, passedAt.Add(2*StatusListWindow)); r.Verified || r.Failed() != "status" {
		t.Errorf("a list past its validUntil: %+v", r.Checks)
	}
	endless := must(i.Signer().Sign(map[string]any{
		"@context": []any{ContextVC}, "id": listURL(0), "type": []any{"VerifiableCredential", "BitstringStatusListCredential"},
		"issuer": i.DID, "validFrom": passedAt.Format(time.RFC3339),
		"credentialSubject": map[string]any{"id": listURL(0) + "#list", "type": "BitstringStatusList", "statusPurpose": Revocation, "encodedList": must(EncodeList(nil))},
	}, passedAt))
	e, _ := json.Marshal(endless)
	if r := Verify(raw, i, listSource{listURL(0): e}, passedAt); r.Verified || !strings.Contains(r.Checks[len(r.Checks)-1].Detail, "validUntil") {
		t.Errorf("a list without validUntil: %+v", r.Checks)
	}
}

// TestImportedPassSaysSo: the credential of a pass another registry
// graded says so in its subject, under sip's own context, and the
// signature covers it: changed to look graded here, it fails.
func TestImportedPassSaysSo(t *testing.T) {
	i := testIssuer(t, 1)
	p := testPass()
	p.Provenance, p.ProvenanceSource = "imported", "safemolt"
	c, err := i.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	subject := c["credentialSubject"].(map[string]any)
	if subject["provenance"] != "imported" || subject["provenanceSource"] != "safemolt" {
		t.Errorf("credentialSubject = %v, want provenance imported from safemolt", subject)
	}
	if ctx := c["@context"].([]any); ctx[len(ctx)-1] != ContextCredential {
		t.Errorf("@context = %v, want sip's credential context last", ctx)
	}
	raw, _ := json.Marshal(c)
	if r := Verify(raw, didResolver(i.DIDDocument()), nil, passedAt.Add(time.Hour)); !r.Verified {
		t.Fatalf("an imported pass's credential does not verify: %+v", r.Checks)
	}
	for name, change := range map[string]func(map[string]any){
		"provenance graded":  func(s map[string]any) { s["provenance"] = "graded" },
		"provenance removed": func(s map[string]any) { delete(s, "provenance") },
		"another source":     func(s map[string]any) { s["provenanceSource"] = "elsewhere" },
	} {
		var doc map[string]any
		json.Unmarshal(raw, &doc)
		change(doc["credentialSubject"].(map[string]any))
		b, _ := json.Marshal(doc)
		if r := Verify(b, didResolver(i.DIDDocument()), nil, passedAt.Add(time.Hour)); r.Verified || r.Failed() != "signature" {
			t.Errorf("%s: verified %v, failed %q; want the signature to fail", name, r.Verified, r.Failed())
		}
	}
	// A pass graded here names no provenance and no sip context.
	c, _ = i.Issue(testPass())
	if _, ok := c["credentialSubject"].(map[string]any)["provenance"]; ok || len(c["@context"].([]any)) != 2 {
		t.Errorf("a graded pass's credential = %v, want no provenance", c)
	}
}
