package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry/credential"
)

// TestVerifyCommand: sip verify fetches the issuer's did:web document
// and says which check passed and which failed.
func TestVerifyCommand(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	k, _ := credential.KeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	iss, err := credential.NewIssuer(srv.URL, "Test registry", []credential.Key{k})
	if err != nil {
		t.Fatal(err)
	}
	mux.HandleFunc("GET /.well-known/did.json", func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(iss.DIDDocument())
	})
	now := time.Now().UTC().Truncate(time.Second)
	write := func(p credential.Pass, edit func(map[string]any)) string {
		c, err := iss.Issue(p)
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(c)
		}
		b, _ := json.Marshal(c)
		f := filepath.Join(t.TempDir(), "credential.json")
		os.WriteFile(f, b, 0o644)
		return f
	}
	pass := credential.Pass{CredentialURL: srv.URL + "/c", ResultURL: srv.URL + "/r", TraceURL: srv.URL + "/t", Agent: "ada",
		AgentURL: srv.URL + "/agents/ada", EvaluationURL: srv.URL + "/evaluations/poaw", EvaluationID: "poaw", Number: 2,
		Name: "Proof of Agentic Work", Version: "1.0.0", ContentSHA256: strings.Repeat("0", 64), PassedAt: now.Add(-time.Hour)}

	good := write(pass, nil)
	if code, out, errOut := runSip(t, "verify", good); code != exitOK || !strings.Contains(out, "verified: "+srv.URL+"/agents/ada holds") {
		t.Errorf("a good credential: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runSip(t, "verify", "--format", "json", good); code != exitOK || !strings.Contains(out, `"verified": true`) {
		t.Errorf("json: exit %d\n%s", code, out)
	}
	tampered := write(pass, func(c map[string]any) { c["name"] = "Something else" })
	if code, out, _ := runSip(t, "verify", tampered); code != exitData || !strings.Contains(out, "FAIL signature") {
		t.Errorf("a tampered credential: exit %d\n%s", code, out)
	}
	expired := pass
	expired.ExpiresAt = now.Add(-time.Minute)
	if code, out, _ := runSip(t, "verify", write(expired, nil)); code != exitData || !strings.Contains(out, "FAIL validity") {
		t.Errorf("an expired credential: exit %d\n%s", code, out)
	}
	if code, _, _ := runSip(t, "verify", filepath.Join(t.TempDir(), "missing.json")); code != exitNoInput {
		t.Errorf("a missing file: exit %d", code)
	}
	srv.Close()
	if code, out, _ := runSip(t, "verify", good); code != exitUnavailable || !strings.Contains(out, "FAIL issuer key") {
		t.Errorf("the issuer unreachable: exit %d\n%s", code, out)
	}
}
