package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/credential"
	"github.com/sipregistry/sip/registry/evaluation"
)

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
	snap, err := s.catalog.current(c.Request().Context())
	if err != nil {
		return err
	}
	ext, report, err := s.runtime.PresentCredential(c.Request().Context(), a.ID, snap.entries, evaluation.Presentation{
		Credential: req.Credential, Attestation: req.Attestation, Holder: s.link("/agents/" + a.Name), Audience: s.issuer.DID})
	if err != nil {
		return err
	}
	if ext == nil {
		return c.JSON(http.StatusUnprocessableEntity, struct {
			Success bool `json:"success"`
			credential.Report
		}{false, report})
	}
	issuer, validUntil := ext.Issuer, ext.ValidUntil
	out := map[string]any{"issuer": issuer, "achievement": report.Achievement, "subject": report.Subject}
	if !validUntil.IsZero() {
		out["valid_until"] = timestamp(validUntil)
	}
	return c.JSON(http.StatusCreated, map[string]any{"success": true, "credential": out})
}
