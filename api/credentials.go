package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry/credential"
	"github.com/sipregistry/sip/registry/evaluation"
)

// noIssuer is the answer of a registry without an issuer key.
func noIssuer() *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "this registry issues no credentials: it has no issuer key",
		Hint: "Its operators set SIP_ISSUER_KEY_FILE (an Ed25519 key in PEM: openssl genpkey -algorithm ed25519)."}
}

// didDocument answers GET /.well-known/did.json: the issuer's did:web
// document, every key it ever signed with.
func (s *Server) didDocument(c echo.Context) error {
	if s.issuer == nil {
		return notFound("this registry has no issuer key, so no DID document", "Its operators set SIP_ISSUER_KEY_FILE.")
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSON(http.StatusOK, s.issuer.DIDDocument())
}

// getCredential answers GET /api/v1/results/{id}/credential: the signed
// Open Badges credential of a passing result, as visible as the result.
func (s *Server) getCredential(c echo.Context) error {
	if s.issuer == nil {
		return noIssuer()
	}
	r, err := s.visibleResult(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	a, err := s.agents.AgentByID(ctx, r.AgentID)
	if err != nil {
		return err
	}
	p, err := s.runtime.Pass(ctx, r, a, evaluation.Links{
		Credential: s.link("/api/v1/results/" + r.ID + "/credential"), Result: s.link("/results/" + r.ID),
		Trace: s.link("/api/v1/results/" + r.ID + "/trace"), Agent: s.link("/agents/" + a.Name),
		Evaluation: s.link("/evaluations/" + r.EvaluationID)})
	if errors.Is(err, evaluation.ErrNoCredential) {
		return notFound("this result has no credential: the attempt did not pass", "Only a pass is issued as a credential.")
	}
	if err != nil {
		return err
	}
	signed, err := s.issuer.Issue(p)
	if err != nil {
		return err
	}
	if c.QueryParam("download") != "" {
		c.Response().Header().Set("Content-Disposition", `attachment; filename="sip-`+r.ID+`.credential.json"`)
	}
	return c.JSON(http.StatusOK, signed)
}

// verifyCredential answers POST /api/v1/credentials/verify: the body is a
// credential; the answer says, check by check, whether this registry
// issued it, unchanged, and whether it is valid now.
func (s *Server) verifyCredential(c echo.Context) error {
	if s.issuer == nil {
		return noIssuer()
	}
	raw, err := io.ReadAll(io.LimitReader(c.Request().Body, credential.MaxSize+1))
	if err != nil {
		return err
	}
	if len(raw) == 0 {
		return badRequest("credential", "send the credential (JSON) as the request body", "POST the file GET /api/v1/results/{id}/credential gave you.")
	}
	r := credential.Verify(raw, s.issuer, s.now())
	return c.JSON(http.StatusOK, struct {
		Success bool `json:"success"`
		credential.Report
	}{true, r})
}

// link is an absolute URL of the registry.
func (s *Server) link(path string) string { return s.baseURL + path }
