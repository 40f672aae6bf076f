package credential

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// interopDir is where .ci/run installs the independent implementation
// (testdata/interop with its npm packages). Under CI it must be there.
func interopDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SIP_VC_INTEROP_DIR")
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("SIP_VC_INTEROP_DIR is not set: .ci/run installs Digital Bazaar's vc library there")
		}
		t.Skip("SKIPPED: SIP_VC_INTEROP_DIR is not set; copy testdata/interop somewhere, npm install there, and point SIP_VC_INTEROP_DIR at it")
	}
	return dir
}

func node(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command("node", append([]string{filepath.Join(dir, args[0])}, args[1:]...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("node %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("node %v: %v", args, err)
	}
	return out
}

func writeJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

type jsVerdict struct {
	Verified bool   `json:"verified"`
	Error    string `json:"error"`
}

// TestAnIndependentVerifierAcceptsOurCredentials: Digital Bazaar's vc
// library verifies a credential sip issued, and refuses it changed.
func TestAnIndependentVerifierAcceptsOurCredentials(t *testing.T) {
	dir := interopDir(t)
	i := testIssuer(t, 1, 2) // a rotated issuer: the newest key signs
	c, err := i.Issue(testPass())
	if err != nil {
		t.Fatal(err)
	}
	did := writeJSON(t, i.DIDDocument())
	var v jsVerdict
	json.Unmarshal(node(t, dir, "verify.mjs", writeJSON(t, c), did), &v)
	if !v.Verified {
		t.Fatalf("the vc library refuses our credential: %s", v.Error)
	}
	c["credentialSubject"].(map[string]any)["id"] = "https://registry.example:8443/agents/eve"
	json.Unmarshal(node(t, dir, "verify.mjs", writeJSON(t, c), did), &v)
	if v.Verified {
		t.Error("the vc library accepts our credential with another subject")
	}
}

// didResolver resolves the keys of one DID document.
type didResolver map[string]any

func (d didResolver) PublicKey(vm string) (ed25519.PublicKey, error) {
	did, _ := d["id"].(string)
	return keyIn(d, did, vm)
}

// TestWeAcceptAnIndependentImplementationsCredentials: a credential that
// Digital Bazaar's vc library issued passes our verifier, and fails it
// when changed.
func TestWeAcceptAnIndependentImplementationsCredentials(t *testing.T) {
	dir := interopDir(t)
	badge := testIssuer(t, 1).Badge(testPass())
	var out struct {
		Credential  map[string]any `json:"credential"`
		DIDDocument map[string]any `json:"didDocument"`
	}
	if err := json.Unmarshal(node(t, dir, "issue.mjs", writeJSON(t, badge), "other.example"), &out); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out.Credential)
	r := Verify(raw, didResolver(out.DIDDocument), nil, passedAt.Add(time.Hour))
	if !r.Verified || r.Issuer != "did:web:other.example" {
		t.Fatalf("we refuse the vc library's credential: %+v", r)
	}
	out.Credential["name"] = "Something else"
	raw, _ = json.Marshal(out.Credential)
	if r := Verify(raw, didResolver(out.DIDDocument), nil, passedAt.Add(time.Hour)); r.Verified || r.Failed() != "signature" {
		t.Errorf("we accept the vc library's credential changed: %+v", r.Checks)
	}
}

// TestAnIndependentVerifierSeesRevocation: the same library, with Digital
// Bazaar's Bitstring Status List checker, reads our status list: the
// credential verifies while its bit is clear, and not once it is set.
func TestAnIndependentVerifierSeesRevocation(t *testing.T) {
	dir := interopDir(t)
	i := testIssuer(t, 1)
	listURL := func(n int64) string {
		return "https://registry.example:8443/api/v1/credentials/status/revocation/" + strconv.FormatInt(n, 10)
	}
	p := testPass()
	p.Status = Entry(listURL, 5)
	c, err := i.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	cred, did := writeJSON(t, c), writeJSON(t, i.DIDDocument())
	for _, tc := range []struct {
		name    string
		revoked []int64
		want    bool
	}{
		{"not revoked", []int64{4, 6}, true},
		{"revoked", []int64{5}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The vc library judges the list at the real time.
			now := time.Now()
			list, err := i.StatusList(listURL(0), tc.revoked, now)
			if err != nil {
				t.Fatal(err)
			}
			var v jsVerdict
			json.Unmarshal(node(t, dir, "verify.mjs", cred, did, writeJSON(t, list)), &v)
			if v.Verified != tc.want {
				t.Errorf("the vc library says verified=%v (%s), want %v", v.Verified, v.Error, tc.want)
			}
			// Our verifier agrees.
			raw, _ := json.Marshal(c)
			lr, _ := json.Marshal(list)
			r := Verify(raw, i, listSource{listURL(0): lr}, now)
			if r.Verified != tc.want || (!tc.want && r.Failed() != "status") {
				t.Errorf("our verifier: %+v", r.Checks)
			}
		})
	}
}

// listSource serves status lists from memory.
type listSource map[string][]byte

func (l listSource) StatusList(u string) ([]byte, error) {
	if b, ok := l[u]; ok {
		return b, nil
	}
	return nil, errors.New("no such list")
}

// TestAnIndependentVerifierAcceptsAnImportedPass: the vc library, given
// sip's credential context from this repository, verifies the credential
// of an imported pass, and refuses it when its provenance is changed.
func TestAnIndependentVerifierAcceptsAnImportedPass(t *testing.T) {
	dir := interopDir(t)
	b, err := contextFiles.ReadFile(contextsDirectory + "/" + contextFile[ContextCredential])
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SIP_VC_CONTEXTS", writeJSON(t, map[string]any{ContextCredential: doc}))
	i := testIssuer(t, 1)
	p := testPass()
	p.Provenance, p.ProvenanceSource = "imported", "safemolt"
	c, err := i.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	did := writeJSON(t, i.DIDDocument())
	var v jsVerdict
	json.Unmarshal(node(t, dir, "verify.mjs", writeJSON(t, c), did), &v)
	if !v.Verified {
		t.Fatalf("the vc library refuses an imported pass's credential: %s", v.Error)
	}
	c["credentialSubject"].(map[string]any)["provenance"] = "graded"
	json.Unmarshal(node(t, dir, "verify.mjs", writeJSON(t, c), did), &v)
	if v.Verified {
		t.Error("the vc library accepts an imported pass's credential claiming to be graded")
	}
}
