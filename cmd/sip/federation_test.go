package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// callAPI calls a registry's API with an agent's key.
func callAPI(t *testing.T, method, url, key string, body any, out any) int {
	t.Helper()
	var r *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	} else {
		r = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

// TestSecondRegistryAcceptsTheFirstsCredential: two `sip serve`
// instances. Registry B has an evaluation whose prerequisite is registry
// A's Proof of Agentic Work credential. An agent that passed PoAW on A
// presents its credential to B with A's attestation that it is the
// credential's subject, and may then register on B; a tampered
// credential, another agent presenting it, a second agent of the same
// subject, and an untrusted issuer are refused.
func TestSecondRegistryAcceptsTheFirstsCredential(t *testing.T) {
	t.Parallel()
	a := MustRunMain(t, &Main{})
	var aDID struct {
		ID string `json:"id"`
	}
	if code := callAPI(t, "GET", a.URL+"/.well-known/did.json", "", nil, &aDID); code != 200 {
		t.Fatalf("A's DID: %d", code)
	}
	dir := copyBundled(t)
	sip30 := fmt.Sprintf(`---
sip: 30
id: after-poaw-elsewhere
name: After PoAW Elsewhere
module: core
type: simple_pass_fail
status: active
prerequisites:
  - credential:
      issuer: %s
      achievement: %s/evaluations/poaw
author: Ada
created_at: 2026-11-24
updated_at: 2026-11-24
version: "1.0.0"
executable:
  handler: identity_check_handler
---

# SIP-30: After PoAW Elsewhere

## How it runs

Submit a non-empty IDENTITY.md.

## Passing

Any non-empty file passes.
`, aDID.ID, a.URL)
	os.WriteFile(filepath.Join(dir, "SIP-30.md"), []byte(sip30), 0o644)
	b := MustRunMain(t, &Main{EvaluationsDir: dir})
	var bDID struct {
		ID string `json:"id"`
	}
	callAPI(t, "GET", b.URL+"/.well-known/did.json", "", nil, &bDID)

	keyA, resultID := passPoAWResult(t, a.URL, "ada")
	var cred map[string]any
	if code := callAPI(t, "GET", a.URL+"/api/v1/results/"+resultID+"/credential", keyA, nil, &cred); code != 200 {
		t.Fatalf("credential on A: %d", code)
	}
	register := func(name string) string {
		var reg struct {
			Agent struct {
				APIKey string `json:"api_key"`
			} `json:"agent"`
		}
		if code := callAPI(t, "POST", b.URL+"/api/v1/agents/register", "", map[string]string{"name": name}, &reg); code != 201 {
			t.Fatalf("register %s on B: %d", name, code)
		}
		return reg.Agent.APIKey
	}
	keyB, eve := register("ada"), register("eve")
	if code := callAPI(t, "POST", b.URL+"/api/v1/evaluations/after-poaw-elsewhere/register", keyB, nil, nil); code != 403 {
		t.Fatalf("registering without the credential: %d, want 403", code)
	}
	attest := func(key, holder string) map[string]any {
		var out struct {
			Attestation map[string]any `json:"attestation"`
		}
		if code := callAPI(t, "POST", a.URL+"/api/v1/agents/me/attestations", key, map[string]string{"audience": bDID.ID, "holder": holder}, &out); code != 201 {
			t.Fatalf("attestation from A: %d", code)
		}
		return out.Attestation
	}
	att := attest(keyA, b.URL+"/agents/ada")
	present := func(key string, c, at map[string]any) (int, map[string]any) {
		var out map[string]any
		return callAPI(t, "POST", b.URL+"/api/v1/agents/me/credentials", key, map[string]any{"credential": c, "attestation": at}, &out), out
	}

	// Refused: another agent presenting ada's credential and attestation;
	// eve with an attestation of her own A account; a changed credential.
	if code, out := present(eve, cred, att); code != 403 {
		t.Errorf("eve presents ada's credential: %d %v", code, out)
	}
	keyEveA, _ := passPoAWResult(t, a.URL, "eve-a")
	if code, out := present(eve, cred, attest(keyEveA, b.URL+"/agents/eve")); code != 403 {
		t.Errorf("eve presents ada's credential with her own attestation: %d %v", code, out)
	}
	tampered := map[string]any{}
	for k, v := range cred {
		tampered[k] = v
	}
	tampered["name"] = "Something else"
	if code, out := present(keyB, tampered, att); code != 422 || out["verified"] != false {
		t.Errorf("a tampered credential: %d %v", code, out)
	}
	// An issuer no SIP of B trusts: B itself.
	keyBPoAW, bResult := passPoAWResult(t, b.URL, "bea")
	var own map[string]any
	callAPI(t, "GET", b.URL+"/api/v1/results/"+bResult+"/credential", keyBPoAW, nil, &own)
	if code, _ := present(keyBPoAW, own, att); code != 403 {
		t.Errorf("an untrusted issuer: %d", code)
	}

	// Accepted: ada's own, with A's attestation; then she may register.
	if code, out := present(keyB, cred, att); code != 201 {
		t.Fatalf("ada presents her credential: %d %v", code, out)
	}
	var refusal map[string]any
	if code := callAPI(t, "POST", b.URL+"/api/v1/evaluations/after-poaw-elsewhere/register", keyB, nil, &refusal); code != 201 {
		t.Errorf("registering with the credential: %d, want 201: %v", code, refusal)
	}
	// Ada's agent on A is one agent on B: a second agent of hers on B,
	// with an attestation A signs for it, does not get the credential too.
	puppet := register("ada-2")
	if code, out := present(puppet, cred, attest(keyA, b.URL+"/agents/ada-2")); code != 409 {
		t.Errorf("a second agent presents the same subject's credential: %d %v, want 409", code, out)
	}
	if code := callAPI(t, "POST", b.URL+"/api/v1/evaluations/after-poaw-elsewhere/register", puppet, nil, nil); code != 403 {
		t.Errorf("the second agent registers: %d, want 403", code)
	}
}
