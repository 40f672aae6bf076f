package credential

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Check is one check of a credential's verification.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Report is the verification of a credential, check by check.
type Report struct {
	Verified bool    `json:"verified"`
	Checks   []Check `json:"checks"`
	// Issuer, Subject and Achievement say what the credential claims
	// (when it could be read).
	Issuer      string `json:"issuer,omitempty"`
	Subject     string `json:"subject,omitempty"`
	Achievement string `json:"achievement,omitempty"`
}

// Failed names the first check that failed ("" when verified).
func (r Report) Failed() string {
	for _, c := range r.Checks {
		if !c.OK {
			return c.Name
		}
	}
	return ""
}

// KeyResolver finds the public key of an issuer's verification method.
type KeyResolver interface {
	PublicKey(verificationMethod string) (ed25519.PublicKey, error)
}

// MaxSize bounds a credential that is read for verification.
const MaxSize = 256 << 10

// Verify checks a credential (JSON) in order: its format (an
// OpenBadgeCredential in the contexts this package knows), that the key
// that signed it is the issuer's, the signature over the whole
// credential, its validity window at now, and its status in the issuer's
// Bitstring Status List (fetched through status, from the issuer's site
// only; a list that cannot be fetched fails the check). Every check is reported;
// later checks that depend on a failed one are not run.
func Verify(raw []byte, keys KeyResolver, status StatusSource, now time.Time) Report {
	var r Report
	add := func(name string, err error, ok string) bool {
		c := Check{Name: name, OK: err == nil, Detail: ok}
		if err != nil {
			c.Detail = err.Error()
		}
		r.Checks = append(r.Checks, c)
		return err == nil
	}
	if len(raw) > MaxSize {
		add("format", fmt.Errorf("the credential has %d bytes, more than %d", len(raw), MaxSize), "")
		return r
	}
	var doc map[string]any
	if !add("format", func() error {
		if err := json.Unmarshal(raw, &doc); err != nil {
			return fmt.Errorf("not a JSON object: %v", err)
		}
		return checkFormat(doc)
	}(), "an OpenBadgeCredential (Open Badges 3.0, Verifiable Credentials 2.0)") {
		return r
	}
	r.Issuer = issuerID(doc)
	if subject, ok := doc["credentialSubject"].(map[string]any); ok {
		r.Subject, _ = subject["id"].(string)
		if a, ok := subject["achievement"].(map[string]any); ok {
			r.Achievement, _ = a["id"].(string)
		}
	}
	proof, _ := doc["proof"].(map[string]any)
	vm, _ := proof["verificationMethod"].(string)
	if !add("issuer", func() error {
		if !strings.HasPrefix(vm, r.Issuer+"#") {
			return fmt.Errorf("signed with %q, which is not a key of the issuer %s", vm, r.Issuer)
		}
		return nil
	}(), "signed with a key of "+r.Issuer) {
		return r
	}
	if _, err := VerifyProof(doc, keys.PublicKey); err != nil {
		name := "signature"
		var pe *ProofError
		if errors.As(err, &pe) {
			name, err = pe.Check, errors.New(pe.Reason)
		}
		add(name, err, "")
		return r
	}
	add("signature", nil, "the "+Cryptosuite+" proof matches the credential and the issuer's key "+vm)
	add("validity", validity(doc, now), "valid at "+now.UTC().Format(time.RFC3339))
	detail, err := checkStatus(doc, r.Issuer, keys, status, now)
	add("status", err, detail)
	r.Verified = r.Failed() == ""
	return r
}

// checkFormat says whether a document is an OpenBadgeCredential this
// package can judge.
func checkFormat(doc map[string]any) error {
	ctx, _ := doc["@context"].([]any)
	if len(ctx) < 2 || ctx[0] != ContextVC {
		return fmt.Errorf("@context must start with %s", ContextVC)
	}
	for _, c := range ctx {
		s, ok := c.(string)
		if _, known := contextFile[s]; !ok || !known {
			return fmt.Errorf("@context %v is not one this registry knows (contexts are never fetched)", c)
		}
	}
	types, _ := doc["type"].([]any)
	if !slices.Contains(types, any("VerifiableCredential")) || !slices.Contains(types, any("OpenBadgeCredential")) {
		return fmt.Errorf("type must include VerifiableCredential and OpenBadgeCredential")
	}
	if issuerID(doc) == "" {
		return fmt.Errorf("the credential names no issuer")
	}
	if _, ok := doc["credentialSubject"].(map[string]any); !ok {
		return fmt.Errorf("the credential has no credentialSubject")
	}
	if _, ok := doc["proof"].(map[string]any); !ok {
		return fmt.Errorf("the credential has no proof, or more than one")
	}
	return nil
}

func issuerID(doc map[string]any) string {
	switch v := doc["issuer"].(type) {
	case string:
		return v
	case map[string]any:
		s, _ := v["id"].(string)
		return s
	}
	return ""
}

// ClockSkew is how far in the future a validFrom may be: the issuer's
// clock and the verifier's differ, and a status list is signed when it is
// fetched, after the verifier took the time (a second boundary between the
// two made a fresh list "not yet valid").
const ClockSkew = time.Minute

// validity checks validFrom − ClockSkew ≤ now < validUntil.
func validity(doc map[string]any, now time.Time) error {
	from, err := dateOf(doc, "validFrom")
	if err != nil {
		return err
	}
	if !from.IsZero() && now.Add(ClockSkew).Before(from) {
		return fmt.Errorf("not valid before %s", from.Format(time.RFC3339))
	}
	until, err := dateOf(doc, "validUntil")
	if err != nil {
		return err
	}
	if !until.IsZero() && !now.Before(until) {
		return fmt.Errorf("expired at %s", until.Format(time.RFC3339))
	}
	return nil
}

func dateOf(doc map[string]any, field string) (time.Time, error) {
	v, ok := doc[field]
	if !ok {
		return time.Time{}, nil
	}
	s, _ := v.(string)
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not a date-time", field, s)
	}
	return t, nil
}
