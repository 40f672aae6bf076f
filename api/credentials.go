package api

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
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
	a, err := s.runtime.Agent(c.Request().Context(), r.AgentID)
	if err != nil {
		return err
	}
	signed, err := s.credentialOf(c.Request().Context(), r, a)
	if errors.Is(err, evaluation.ErrNoCredential) {
		return notFound("this result has no credential: the attempt did not pass", "Only a pass is issued as a credential.")
	}
	if err != nil {
		return err
	}
	if c.QueryParam("download") != "" {
		c.Response().Header().Set("Content-Disposition", `attachment; filename="sip-`+r.ID+`.credential.json"`)
	}
	return c.JSON(http.StatusOK, signed)
}

// credentialOf is the signed credential of a passing result, with its
// entry in the revocation status list.
func (s *Server) credentialOf(ctx context.Context, r *evaluation.Result, a *registry.Agent) (map[string]any, error) {
	p, err := s.runtime.Pass(ctx, r, a, evaluation.Links{
		Credential: s.link("/api/v1/results/" + r.ID + "/credential"), Result: s.link("/results/" + r.ID),
		Trace: s.link("/api/v1/results/" + r.ID + "/trace"), Agent: s.link("/agents/" + a.Name),
		Evaluation: s.link("/evaluations/" + r.EvaluationID)})
	if err != nil {
		return nil, err
	}
	index, err := s.runtime.CredentialIndex(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	p.Status = credential.Entry(s.statusListURL, index)
	return s.issuer.Issue(p)
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
	r := credential.Verify(raw, s.issuer, localStatus{s, c.Request().Context()}, s.now())
	return c.JSON(http.StatusOK, struct {
		Success bool `json:"success"`
		credential.Report
	}{true, r})
}

// statusListURL is where status list n is published.
func (s *Server) statusListURL(n int64) string {
	return s.link("/api/v1/credentials/status/" + credential.Revocation + "/" + strconv.FormatInt(n, 10))
}

// statusList answers GET /api/v1/credentials/status/revocation/{n}: the
// signed Bitstring Status List of credentials n·131072 to (n+1)·131072−1,
// read fresh on every request (a revocation shows at once).
func (s *Server) statusList(c echo.Context) error {
	if s.issuer == nil {
		return noIssuer()
	}
	n, err := strconv.ParseInt(c.Param("n"), 10, 64)
	if err != nil || n < 0 || n > 1<<20 {
		return notFound("no such status list", "Status lists are numbered from 0.")
	}
	raw, err := s.signedStatusList(c.Request().Context(), n)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	return c.JSONBlob(http.StatusOK, raw)
}

// signedStatusList is status list n, signed. Signing costs a few
// milliseconds, so a list is signed once per set of revoked bits and kept:
// anyone may fetch it, as often as they like, for the price of one query.
func (s *Server) signedStatusList(ctx context.Context, n int64) ([]byte, error) {
	revoked, err := s.runtime.RevokedIndexes(ctx, n*credential.ListSize, (n+1)*credential.ListSize)
	if err != nil {
		return nil, err
	}
	// A list is dated by its window, so the same bits sign anew in each.
	now := s.now()
	sum := sha256.Sum256([]byte(fmt.Sprint(n, revoked, now.Truncate(credential.StatusListWindow).Unix())))
	key := string(sum[:])
	s.listsMu.Lock()
	raw, ok := s.lists[key]
	s.listsMu.Unlock()
	if ok {
		return raw, nil
	}
	for i := range revoked {
		revoked[i] -= n * credential.ListSize
	}
	list, err := s.issuer.StatusList(s.statusListURL(n), revoked, now)
	if err != nil {
		return nil, err
	}
	if raw, err = json.Marshal(list); err != nil {
		return nil, err
	}
	s.listsMu.Lock()
	if s.lists == nil || len(s.lists) >= 64 {
		s.lists = map[string][]byte{}
	}
	s.lists[key] = raw
	s.listsMu.Unlock()
	return raw, nil
}

// localStatus reads this registry's own status lists without HTTP.
type localStatus struct {
	s   *Server
	ctx context.Context
}

func (l localStatus) StatusList(u string) ([]byte, error) {
	prefix := l.s.statusListURL(0)
	prefix = prefix[:len(prefix)-1]
	n, err := strconv.ParseInt(strings.TrimPrefix(u, prefix), 10, 64)
	if !strings.HasPrefix(u, prefix) || err != nil || n < 0 {
		return nil, fmt.Errorf("%s is not a status list of this registry", u)
	}
	return l.s.signedStatusList(l.ctx, n)
}

// revokeResult answers POST /api/v1/results/{id}/revoke: an agent
// revokes one of its own results. It no longer counts as a pass, and its
// credential reads as revoked in the status list.
func (s *Server) revokeResult(c echo.Context, a *registry.Agent) error {
	var req struct {
		Reason string `json:"reason"`
	}
	if c.Request().ContentLength != 0 {
		if err := bind(c, &req); err != nil {
			return err
		}
	}
	r, err := s.runtime.RevokeResult(c.Request().Context(), a.ID, c.Param("id"), req.Reason)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Success bool       `json:"success"`
		Result  resultView `json:"result"`
	}{true, toResult(r)})
}

// link is an absolute URL of the registry.
func (s *Server) link(path string) string { return s.baseURL + path }
