package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/credential"
	"github.com/sipregistry/sip/registry/credential/webfetch"
	"github.com/sipregistry/sip/registry/evaluation"
)

// trustedIssuers are the issuers the registry's SIPs accept credentials
// of, as their credential prerequisites name them: reviewed in the
// repository under its policy's trusted_issuers. No other issuer's
// document or list is ever fetched.
func (s *Server) trustedIssuers(r *http.Request) map[registry.CredentialPrerequisite]bool {
	snap, err := s.catalog.current(r.Context())
	if err != nil {
		return nil
	}
	out := map[registry.CredentialPrerequisite]bool{}
	for _, e := range snap.entries {
		if !e.Removed {
			for _, p := range e.CredentialPrerequisites {
				out[p] = true
			}
		}
	}
	return out
}

func (s *Server) trusts(r *http.Request, did string) bool {
	for p := range s.trustedIssuers(r) {
		if p.Issuer == did {
			return true
		}
	}
	return false
}

// attest answers POST /api/v1/agents/me/attestations: this registry,
// as the issuer of the caller's credentials, signs that the caller
// presents them as holder (its agent page on the registry audience).
func (s *Server) attest(c echo.Context, a *registry.Agent) error {
	if s.issuer == nil {
		return noIssuer()
	}
	var req struct {
		Audience string `json:"audience"`
		Holder   string `json:"holder"`
	}
	if err := bind(c, &req); err != nil {
		return err
	}
	site, err := credential.DIDWebURL(req.Audience)
	if err != nil {
		return badRequest("audience", "audience must be the did:web identifier of the registry you present to", "Its DID is at /.well-known/did.json there.")
	}
	su, _ := url.Parse(site)
	hu, err := url.Parse(req.Holder)
	if err != nil || hu.Host != su.Host || hu.Scheme != su.Scheme {
		return badRequest("holder", "holder must be your agent's page on the audience's site", "e.g. https://other.example/agents/your-name")
	}
	att, err := s.issuer.Attest(s.link("/agents/"+a.Name), req.Holder, req.Audience, s.now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"success": true, "attestation": att,
		"expires_in": int(credential.AttestationLifetime / time.Second)})
}

// presentCredential answers POST /api/v1/agents/me/credentials: an agent
// presents a credential another registry issued, with that registry's
// attestation that the agent is its subject; once verified it meets the
// credential prerequisites that name its issuer and achievement.
func (s *Server) presentCredential(c echo.Context, a *registry.Agent) error {
	if s.issuer == nil {
		return noIssuer()
	}
	var req struct {
		Credential  json.RawMessage `json:"credential"`
		Attestation json.RawMessage `json:"attestation"`
	}
	if err := bind(c, &req); err != nil {
		return err
	}
	if len(req.Credential) == 0 || len(req.Attestation) == 0 {
		return badRequest("credential", "send the credential and the attestation its issuer signed for you",
			"Ask the issuing registry: POST /api/v1/agents/me/attestations with this registry's DID as audience.")
	}
	var head struct {
		Issuer any `json:"issuer"`
	}
	json.Unmarshal(req.Credential, &head)
	issuer, _ := head.Issuer.(string)
	if m, ok := head.Issuer.(map[string]any); ok {
		issuer, _ = m["id"].(string)
	}
	if !s.trusts(c.Request(), issuer) {
		return &Error{Status: http.StatusForbidden, Code: "forbidden", Message: "no evaluation here accepts credentials of " + issuer,
			Hint: "Credential prerequisites name the issuers this registry trusts."}
	}
	keys := &credential.WebResolver{Fetch: webfetch.Client{HTTP: s.httpClient}, Allow: func(did string) bool { return did == issuer }}
	chk := &credential.Checker{Keys: keys, Status: &credential.WebStatus{Fetch: webfetch.Client{HTTP: s.httpClient}}, Now: s.now}
	report := chk.Check(req.Credential)
	if !report.Verified {
		return c.JSON(http.StatusUnprocessableEntity, struct {
			Success bool `json:"success"`
			credential.Report
		}{false, report})
	}
	if !s.trustedIssuers(c.Request())[registry.CredentialPrerequisite{Issuer: issuer, Achievement: report.Achievement}] {
		return &Error{Status: http.StatusUnprocessableEntity, Code: "validation_failed", Field: "credential",
			Message: "no evaluation here accepts the achievement " + report.Achievement, Hint: "See the credential prerequisites of the evaluations."}
	}
	holder := s.link("/agents/" + a.Name)
	if err := credential.VerifyAttestation(req.Attestation, keys, issuer, report.Subject, holder, s.issuer.DID, s.now()); err != nil {
		return &Error{Status: http.StatusForbidden, Code: "forbidden", Message: "the issuer has not attested that you are this credential's subject: " + err.Error(),
			Hint: "Ask the issuing registry, as the credential's agent, for an attestation with audience " + s.issuer.DID + " and holder " + holder + "."}
	}
	var validUntil time.Time
	var doc map[string]any
	json.Unmarshal(req.Credential, &doc)
	if v, ok := doc["validUntil"].(string); ok {
		validUntil, _ = time.Parse(time.RFC3339, v)
	}
	ext := &evaluation.ExternalCredential{AgentID: a.ID, Issuer: issuer, Achievement: report.Achievement, Subject: report.Subject,
		Credential: req.Credential, ValidUntil: validUntil, RecordedAt: s.now()}
	if err := s.runtime.RecordExternalCredential(c.Request().Context(), ext); err != nil {
		return err
	}
	out := map[string]any{"issuer": issuer, "achievement": report.Achievement, "subject": report.Subject}
	if !validUntil.IsZero() {
		out["valid_until"] = timestamp(validUntil)
	}
	return c.JSON(http.StatusCreated, map[string]any{"success": true, "credential": out})
}
