package credential

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// AttestationType is the type of an issuer's statement that the agent it
// names asked it, holding its key on that registry, to vouch for it to
// another registry.
const AttestationType = "AgentControlAttestation"

// AttestationLifetime is how long an attestation is good for.
const AttestationLifetime = 5 * time.Minute

// Attest signs the statement that the agent at subject (this registry's
// page of the authenticated caller) presents its credentials as holder (an
// agent page on the registry whose DID is audience). Another registry
// accepts a credential only with it, so a credential copied from a public
// page proves nothing to the one who copied it.
func (i *Issuer) Attest(subject, holder, audience string, now time.Time) (map[string]any, error) {
	doc := map[string]any{
		"@context":   []any{ContextVC, ContextAttestation},
		"type":       []any{"VerifiableCredential", AttestationType},
		"issuer":     i.DID,
		"validFrom":  now.UTC().Format(time.RFC3339),
		"validUntil": now.Add(AttestationLifetime).UTC().Format(time.RFC3339),
		"credentialSubject": map[string]any{
			"id": subject, "holder": holder, "audience": audience,
		},
	}
	return i.Signer().Sign(doc, now)
}

// VerifyAttestation checks that raw is issuer's attestation, valid now,
// that the agent at subject presents as holder to audience.
func VerifyAttestation(raw []byte, keys KeyResolver, issuer, subject, holder, audience string, now time.Time) error {
	var doc map[string]any
	if len(raw) > MaxSize || json.Unmarshal(raw, &doc) != nil {
		return errors.New("the attestation is not a JSON object")
	}
	ctx, _ := doc["@context"].([]any)
	if len(ctx) != 2 || ctx[0] != ContextVC || ctx[1] != ContextAttestation {
		return fmt.Errorf("the attestation's @context is not [%s, %s]", ContextVC, ContextAttestation)
	}
	types, _ := doc["type"].([]any)
	if !slices.Contains(types, any(AttestationType)) || issuerID(doc) != issuer {
		return fmt.Errorf("not an %s of %s", AttestationType, issuer)
	}
	proof, _ := doc["proof"].(map[string]any)
	if vm, _ := proof["verificationMethod"].(string); len(vm) <= len(issuer) || vm[:len(issuer)+1] != issuer+"#" {
		return errors.New("the attestation is not signed by the issuer")
	}
	if _, err := VerifyProof(doc, keys.PublicKey); err != nil {
		return fmt.Errorf("the attestation's signature: %w", err)
	}
	if err := validity(doc, now); err != nil {
		return fmt.Errorf("the attestation: %w", err)
	}
	from, _ := dateOf(doc, "validFrom")
	until, _ := dateOf(doc, "validUntil")
	if from.IsZero() || until.IsZero() || until.Sub(from) > 2*AttestationLifetime {
		return errors.New("the attestation's validity is not a short window")
	}
	s, _ := doc["credentialSubject"].(map[string]any)
	for k, want := range map[string]string{"id": subject, "holder": holder, "audience": audience} {
		if s[k] != want {
			return fmt.Errorf("the attestation's %s is %v, not %s", k, s[k], want)
		}
	}
	return nil
}
