package api_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/credential"
)

func testIssuer(t *testing.T, base string) *credential.Issuer {
	t.Helper()
	k, err := credential.KeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	if err != nil {
		t.Fatal(err)
	}
	iss, err := credential.NewIssuer(base, "SIP Registry (test)", []credential.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	return iss
}

type verifyBody struct {
	Success  bool `json:"success"`
	Verified bool `json:"verified"`
	Checks   []struct {
		Name string `json:"name"`
		OK   bool   `json:"ok"`
	} `json:"checks"`
}

func (v verifyBody) failed() string {
	for _, c := range v.Checks {
		if !c.OK {
			return c.Name
		}
	}
	return ""
}

// TestCredentialOfAPass: an agent passes PoAW and downloads a credential
// that this registry verifies, and that names the agent, the SIP at the
// version it was graded under, and its evidence; a changed credential is
// refused by its signature; a failure has no credential; a private agent's
// credential is its own; the issuer's keys are published.
func TestCredentialOfAPass(t *testing.T) {
	const base = "https://registry.test"
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			iss := testIssuer(t, base)
			w := newWorldWith(t, s, func(c *api.Config) { c.Issuer, c.BaseURL = iss, base })
			ada := w.agent("ada-cred")
			pass := ada.poaw(t, false)
			if !pass.Result.Passed {
				t.Fatal("PoAW did not pass")
			}
			var cred map[string]any
			if code := ada.call("GET", "/api/v1/results/"+pass.Result.ID+"/credential", "", &cred); code != 200 {
				t.Fatalf("credential: %d", code)
			}
			raw, _ := json.Marshal(cred)
			lists := statusVia{w, base}
			if r := credential.Verify(raw, iss, lists, w.clock.Now()); !r.Verified {
				t.Fatalf("the credential does not verify: %+v", r.Checks)
			}
			subject := cred["credentialSubject"].(map[string]any)
			achievement := subject["achievement"].(map[string]any)
			if subject["id"] != base+"/agents/ada-cred" || achievement["id"] != base+"/evaluations/poaw" ||
				achievement["humanCode"] != "SIP-2" || achievement["version"] != pass.Result.EvaluationVersion {
				t.Errorf("the credential says subject %v, achievement %v %v %v", subject["id"], achievement["id"], achievement["humanCode"], achievement["version"])
			}
			if ev := cred["evidence"].([]any); len(ev) != 2 || ev[0].(map[string]any)["id"] != base+"/results/"+pass.Result.ID {
				t.Errorf("evidence %v", ev)
			}

			// Anyone may ask this registry to verify it.
			var v verifyBody
			if resp := w.Do("POST", "/api/v1/credentials/verify", bytes.NewReader(raw), jsonHeader, &v); resp.StatusCode != 200 || !v.Verified {
				t.Errorf("verify: %d %+v", resp.StatusCode, v)
			}
			forged := bytes.Replace(raw, []byte(`"ada-cred"`), []byte(`"eve-cred"`), 1)
			forged = bytes.Replace(forged, []byte(base+"/agents/ada-cred"), []byte(base+"/agents/eve-cred"), 1)
			if w.Do("POST", "/api/v1/credentials/verify", bytes.NewReader(forged), jsonHeader, &v); v.Verified || v.failed() != "signature" {
				t.Errorf("a credential moved to another agent: %+v", v)
			}
			if resp := w.Do("POST", "/api/v1/credentials/verify", strings.NewReader(""), jsonHeader, nil); resp.StatusCode != 400 {
				t.Errorf("an empty body: %d", resp.StatusCode)
			}

			// The DID document lists the key that signed.
			var did map[string]any
			if resp := w.Get("/.well-known/did.json", &did); resp.StatusCode != 200 || did["id"] != "did:web:registry.test" {
				t.Errorf("did.json: %d %v", resp.StatusCode, did["id"])
			}

			// The result page offers it, verified.
			page, err := http.Get(w.BaseURL + "/results/" + pass.Result.ID)
			if err != nil {
				t.Fatal(err)
			}
			html, _ := io.ReadAll(page.Body)
			page.Body.Close()
			for _, want := range []string{"Download the credential", "✓ <strong>signature</strong>", "✓ <strong>status</strong>"} {
				if !strings.Contains(string(html), want) {
					t.Errorf("the result page lacks %q", want)
				}
			}

			// The agent revokes it: the status list says so at once, to this
			// registry and to anyone who reads the list.
			var revoked struct {
				Result struct {
					RevokedAt     string `json:"revoked_at"`
					RevokedReason string `json:"revoked_reason"`
				} `json:"result"`
			}
			if code := ada.call("POST", "/api/v1/results/"+pass.Result.ID+"/revoke", `{"reason":"my key leaked"}`, &revoked); code != 200 ||
				revoked.Result.RevokedReason != "revoked by its agent: my key leaked" {
				t.Fatalf("revoke: %d %+v", code, revoked)
			}
			if r := credential.Verify(raw, iss, lists, w.clock.Now()); r.Verified || r.Failed() != "status" {
				t.Errorf("a revoked credential: %+v", r.Checks)
			}
			if w.Do("POST", "/api/v1/credentials/verify", bytes.NewReader(raw), jsonHeader, &v); v.Verified || v.failed() != "status" {
				t.Errorf("verify a revoked credential: %+v", v)
			}
			if code := ada.call("POST", "/api/v1/evaluations/needs-poaw/register", "", nil); code != 403 && code != 409 && code != 422 {
				t.Errorf("a revoked pass still satisfies a prerequisite: %d", code)
			}

			// A failure has no credential, and nobody revokes another's result.
			bob := w.agent("bob-cred")
			fail := bob.poaw(t, true)
			if code := bob.call("GET", "/api/v1/results/"+fail.Result.ID+"/credential", "", nil); code != 404 {
				t.Errorf("the credential of a failure: %d", code)
			}
			if code := bob.call("POST", "/api/v1/results/"+pass.Result.ID+"/revoke", "", nil); code != 404 {
				t.Errorf("another agent revokes a result: %d", code)
			}

			// A private agent's credential is its own.
			if code := ada.call("PATCH", "/api/v1/agents/me", `{"results_public":false}`, nil); code != 200 {
				t.Fatalf("private: %d", code)
			}
			if code := bob.call("GET", "/api/v1/results/"+pass.Result.ID+"/credential", "", nil); code != 404 {
				t.Errorf("another agent reads a private credential: %d", code)
			}
			if code := ada.call("GET", "/api/v1/results/"+pass.Result.ID+"/credential", "", nil); code != 200 {
				t.Errorf("the agent reads its own private credential: %d", code)
			}
		})
	}
}

// statusVia reads status lists from the test server.
type statusVia struct {
	w    *world
	base string
}

func (s statusVia) StatusList(u string) ([]byte, error) {
	resp := s.w.Do("GET", strings.TrimPrefix(u, s.base), nil, nil, nil)
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func TestNoIssuerNoCredentials(t *testing.T) {
	s := backends["sqlite"](t)
	w := newWorld(t, s)
	ada := w.agent("ada-noiss")
	pass := ada.poaw(t, false)
	resp := w.Do("GET", "/api/v1/results/"+pass.Result.ID+"/credential", nil, nil, nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("credential without an issuer: %d %s", resp.StatusCode, body)
	}
	if resp := w.Get("/.well-known/did.json", nil); resp.StatusCode != 404 {
		t.Errorf("did.json without an issuer: %d", resp.StatusCode)
	}
	_ = registry.ErrNotFound
}

// TestCredentialEndpointsRefuseBadInput: the agent endpoints of
// credentials answer malformed, oversized, unauthorised and misdirected
// requests with a clear error and record nothing.
func TestCredentialEndpointsRefuseBadInput(t *testing.T) {
	const base = "https://registry.test"
	s := backends["sqlite"](t)
	w := newWorldWith(t, s, func(c *api.Config) { c.Issuer, c.BaseURL = testIssuer(t, base), base })
	ada := w.agent("ada-bad")
	pass := ada.poaw(t, false)
	for _, tc := range []struct {
		name, method, path, body string
		key                      bool
		want                     int
	}{
		{"revoke without a key", "POST", "/api/v1/results/" + pass.Result.ID + "/revoke", "", false, 401},
		{"revoke with a reason too long", "POST", "/api/v1/results/" + pass.Result.ID + "/revoke", `{"reason":"` + strings.Repeat("x", 501) + `"}`, true, 400},
		{"revoke with an unknown field", "POST", "/api/v1/results/" + pass.Result.ID + "/revoke", `{"why":"x"}`, true, 400},
		{"revoke no such result", "POST", "/api/v1/results/res_nope/revoke", "", true, 404},
		{"attest without a key", "POST", "/api/v1/agents/me/attestations", `{"audience":"did:web:b.example","holder":"https://b.example/agents/ada"}`, false, 401},
		{"attest to a non-did:web audience", "POST", "/api/v1/agents/me/attestations", `{"audience":"did:key:z6Mk","holder":"https://b.example/agents/ada"}`, true, 400},
		{"attest for a holder on another site", "POST", "/api/v1/agents/me/attestations", `{"audience":"did:web:b.example","holder":"https://evil.example/agents/ada"}`, true, 400},
		{"present without a key", "POST", "/api/v1/agents/me/credentials", `{"credential":{},"attestation":{}}`, false, 401},
		{"present without an attestation", "POST", "/api/v1/agents/me/credentials", `{"credential":{"issuer":"did:web:a.example"}}`, true, 400},
		{"present something that is not JSON", "POST", "/api/v1/agents/me/credentials", `{"credential":`, true, 400},
		{"present an untrusted issuer's", "POST", "/api/v1/agents/me/credentials", `{"credential":{"issuer":"did:web:a.example"},"attestation":{"x":1}}`, true, 403},
		{"verify an oversized credential", "POST", "/api/v1/credentials/verify", `{"x":"` + strings.Repeat("a", credential.MaxSize) + `"}`, false, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var code int
			if tc.key {
				code = ada.call(tc.method, tc.path, tc.body, nil)
			} else {
				code = w.Do(tc.method, tc.path, strings.NewReader(tc.body), jsonHeader, nil).StatusCode
			}
			if code != tc.want {
				t.Errorf("%s %s: %d, want %d", tc.method, tc.path, code, tc.want)
			}
		})
	}
	// Nothing was revoked, and the pass still counts.
	var r resultBody
	ada.call("GET", "/api/v1/results/"+pass.Result.ID, "", &r)
	if !r.Result.Passed {
		t.Errorf("the result after bad requests: %+v", r)
	}
	var detail map[string]any
	ada.call("GET", "/api/v1/results/"+pass.Result.ID, "", &detail)
	if res := detail["result"].(map[string]any); res["revoked_at"] != nil {
		t.Errorf("a refused request revoked the result: %v", res)
	}
}

// TestStatusListIsSignedOncePerState: the public status list is the same
// bytes within its window until a bit changes, then changes at once; in
// the next window it is dated anew, valid for two windows.
func TestStatusListIsSignedOncePerState(t *testing.T) {
	const base = "https://registry.test"
	s := backends["sqlite"](t)
	w := newWorldWith(t, s, func(c *api.Config) { c.Issuer, c.BaseURL = testIssuer(t, base), base })
	ada := w.agent("ada-list")
	pass := ada.poaw(t, false)
	ada.call("GET", "/api/v1/results/"+pass.Result.ID+"/credential", "", nil)
	read := func() string {
		resp := w.Do("GET", "/api/v1/credentials/status/revocation/0", nil, nil, nil)
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// To the start of a window, then within it.
	now := w.clock.Now()
	w.clock.Advance(now.Truncate(credential.StatusListWindow).Add(credential.StatusListWindow).Sub(now))
	first := read()
	w.clock.Advance(credential.StatusListWindow - time.Second)
	if again := read(); again != first {
		t.Error("the list was signed again though no bit changed")
	}
	w.clock.Advance(time.Second)
	next := read()
	var list struct {
		ValidFrom  time.Time `json:"validFrom"`
		ValidUntil time.Time `json:"validUntil"`
	}
	if err := json.Unmarshal([]byte(next), &list); err != nil || next == first || !list.ValidFrom.Equal(w.clock.Now()) ||
		!list.ValidUntil.Equal(w.clock.Now().Add(2*credential.StatusListWindow)) {
		t.Errorf("the list in the next window: from %v until %v (%v); want from now, for two windows", list.ValidFrom, list.ValidUntil, err)
	}
	first = next
	ada.call("POST", "/api/v1/results/"+pass.Result.ID+"/revoke", "", nil)
	if after := read(); after == first {
		t.Error("a revocation did not change the list")
	}
}
