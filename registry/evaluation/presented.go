package evaluation

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/credential"
)

// Credentials of other registries that agents present here, decided once:
// only an issuer some evaluation's credential prerequisite names is
// trusted (no other issuer's document is ever fetched), the credential
// verifies, its achievement is one a prerequisite accepts, the issuer
// attests that the presenting agent is its subject, and no other agent
// here presented a credential of that subject (the stores hold each
// subject for the first agent that recorded one).

// ErrUnprocessable is the kind of a refusal of a well-formed request
// that cannot be acted on (a credential no evaluation accepts).
var ErrUnprocessable = errors.New("unprocessable")

// Issuers reaches other registries (cmd/sip wires it over HTTP): the
// keys of one issuer, fetched from its DID document and from no other's,
// and status lists.
type Issuers interface {
	KeysOf(issuer string) credential.KeyResolver
	Status() credential.StatusSource
}

// TrustedIssuers are the credential prerequisites the registry's
// evaluations name (removed ones aside): the issuers and achievements it
// accepts.
func TrustedIssuers(catalog []*registry.Entry) map[registry.CredentialPrerequisite]bool {
	out := map[registry.CredentialPrerequisite]bool{}
	for _, e := range catalog {
		if !e.Removed {
			for _, p := range e.CredentialPrerequisites {
				out[p] = true
			}
		}
	}
	return out
}

// Presentation is a credential presented by its holder.
type Presentation struct {
	Credential, Attestation []byte
	// Holder is the agent's page on this registry, Audience this
	// registry's DID: what the issuer's attestation must name.
	Holder, Audience string
}

// PresentCredential verifies and records a credential another registry
// issued to the agent. A credential that does not verify is not refused
// but reported (the Report names the failed check) and not recorded.
func (s *Service) PresentCredential(ctx context.Context, agentID string, catalog []*registry.Entry, p Presentation) (*ExternalCredential, credential.Report, error) {
	if s.issuers == nil {
		return nil, credential.Report{}, refuse(registry.ErrUnavailable, "unavailable", "this server cannot reach other registries", "Try again later.")
	}
	var head struct {
		Issuer any `json:"issuer"`
	}
	json.Unmarshal(p.Credential, &head)
	issuer, _ := head.Issuer.(string)
	if m, ok := head.Issuer.(map[string]any); ok {
		issuer, _ = m["id"].(string)
	}
	trusted := TrustedIssuers(catalog)
	known := false
	for t := range trusted {
		known = known || t.Issuer == issuer
	}
	if !known {
		return nil, credential.Report{}, forbidden("forbidden", "no evaluation here accepts credentials of "+issuer,
			"Credential prerequisites name the issuers this registry trusts.")
	}
	keys := s.issuers.KeysOf(issuer)
	report := credential.Verify(p.Credential, keys, s.issuers.Status(), s.now())
	if !report.Verified {
		return nil, report, nil
	}
	if !trusted[registry.CredentialPrerequisite{Issuer: issuer, Achievement: report.Achievement}] {
		r := refuse(ErrUnprocessable, "validation_failed", "no evaluation here accepts the achievement "+report.Achievement,
			"See the credential prerequisites of the evaluations.")
		r.Field = "credential"
		return nil, report, r
	}
	if err := credential.VerifyAttestation(p.Attestation, keys, issuer, report.Subject, p.Holder, p.Audience, s.now()); err != nil {
		return nil, report, forbidden("forbidden", "the issuer has not attested that you are this credential's subject: "+err.Error(),
			"Ask the issuing registry, as the credential's agent, for an attestation with audience "+p.Audience+" and holder "+p.Holder+".")
	}
	var validUntil time.Time
	var doc map[string]any
	json.Unmarshal(p.Credential, &doc)
	if v, ok := doc["validUntil"].(string); ok {
		validUntil, _ = time.Parse(time.RFC3339, v)
	}
	ext := &ExternalCredential{AgentID: agentID, Issuer: issuer, Achievement: report.Achievement, Subject: report.Subject,
		Credential: p.Credential, ValidUntil: validUntil, RecordedAt: s.now()}
	if err := s.presented.PutExternalCredential(ctx, ext); errors.Is(err, registry.ErrConflict) {
		return nil, report, refuse(registry.ErrConflict, "conflict", "another agent here already presented a credential of "+report.Subject+
			": one agent of another registry is one agent here", "Present it as the agent that presented its other credentials.")
	} else if err != nil {
		return nil, report, err
	}
	return ext, report, nil
}
