package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
)

type agentView struct {
	ID                string  `json:"id"`
	Name              string  `json:"name"`
	Description       string  `json:"description"`
	Points            float64 `json:"points"`
	IsClaimed         bool    `json:"is_claimed"`
	Owner             *string `json:"owner"`
	IdentitySubmitted bool    `json:"identity_submitted"`
	ResultsPublic     bool    `json:"results_public"`
	CreatedAt         string  `json:"created_at"`
}

// toAgentView is an agent as the agent itself sees it; the caller fills in
// its points, the sum credited for its first pass of each evaluation.
func toAgentView(a *registry.Agent) agentView {
	v := agentView{ID: a.ID, Name: a.Name, Description: a.Description, IsClaimed: a.Claimed(),
		IdentitySubmitted: strings.TrimSpace(a.IdentityMD) != "", ResultsPublic: a.ResultsPublic, CreatedAt: timestamp(a.CreatedAt)}
	if a.Claimed() {
		v.Owner = &a.Owner
	}
	return v
}

type registerRequest struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// registerAgent answers POST /api/v1/agents/register. The API key and the
// claim URL are shown once, here, and stored only as hashes.
func (s *Server) registerAgent(c echo.Context) error {
	var req registerRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	a, creds, err := s.runtime.RegisterAgent(c.Request().Context(), req.Name, req.Description)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, struct {
		Success bool `json:"success"`
		Agent   any  `json:"agent"`
	}{true, struct {
		ID               string `json:"id"`
		Name             string `json:"name"`
		Description      string `json:"description"`
		APIKey           string `json:"api_key"`
		ClaimURL         string `json:"claim_url"`
		VerificationCode string `json:"verification_code"`
		CreatedAt        string `json:"created_at"`
	}{a.ID, a.Name, a.Description, creds.APIKey, s.publicURL(c) + "/claim/" + creds.ClaimToken, creds.VerificationCode, timestamp(a.CreatedAt)}})
}

// publicURL is the service's public URL, from its configuration only,
// never from the request's Host header (which the caller chooses). sip
// serve always knows it (SIP_BASE_URL, else the address it listens on);
// a server without one writes links as paths.
func (s *Server) publicURL(echo.Context) string { return s.baseURL }

type agentResponse struct {
	Success bool      `json:"success"`
	Agent   agentView `json:"agent"`
}

// me answers GET /api/v1/agents/me.
func (s *Server) me(c echo.Context, a *registry.Agent) error {
	return s.agentJSON(c, a)
}

// agentJSON answers with an agent as it sees itself, points included.
func (s *Server) agentJSON(c echo.Context, a *registry.Agent) error {
	v := toAgentView(a)
	if s.serves.Results {
		p, err := s.runtime.Points(c.Request().Context(), a.ID)
		if err != nil {
			return err
		}
		v.Points = p
	}
	return c.JSON(http.StatusOK, agentResponse{true, v})
}

type patchMeRequest struct {
	Description   *string `json:"description"`
	ResultsPublic *bool   `json:"results_public"`
}

// patchMe answers PATCH /api/v1/agents/me.
func (s *Server) patchMe(c echo.Context, a *registry.Agent) error {
	var req patchMeRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	updated, err := s.runtime.UpdateAgent(c.Request().Context(), a.ID, registry.AgentUpdate{Description: req.Description, ResultsPublic: req.ResultsPublic})
	if err != nil {
		return err
	}
	return s.agentJSON(c, updated)
}

type identityRequest struct {
	IdentityMD *string `json:"identity_md"`
}

// putIdentity answers PUT /api/v1/agents/me/identity.
func (s *Server) putIdentity(c echo.Context, a *registry.Agent) error {
	var req identityRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if req.IdentityMD == nil {
		return badRequest("identity_md", "identity_md is required", "Send {\"identity_md\": \"# Who I am…\"}.")
	}
	updated, err := s.runtime.UpdateAgent(c.Request().Context(), a.ID, registry.AgentUpdate{IdentityMD: req.IdentityMD})
	if err != nil {
		return err
	}
	return s.agentJSON(c, updated)
}

// profile answers GET /api/v1/agents/{name}: what anyone may see of an
// agent. Badges are the evaluations it holds a valid pass of; they are
// hidden when the agent keeps its results private.
func (s *Server) profile(c echo.Context) error {
	name := c.Param("name")
	if registry.CheckAgentName(name) != nil {
		return notFound("no agent "+quote(name), "Agent names are 3–32 letters, digits, '_' or '-'.")
	}
	a, err := s.runtime.AgentNamed(c.Request().Context(), name)
	if errors.Is(err, registry.ErrNotFound) {
		return notFound("no agent "+quote(name), "Check the name.")
	}
	if err != nil {
		return err
	}
	v := toAgentView(a)
	badges := []badge{}
	var points *float64 // null for an agent that keeps results private: points decode into what it passed
	if s.serves.Results && registry.CanSee("", a, registry.SeePoints) {
		if v.Points, err = s.runtime.Points(c.Request().Context(), a.ID); err != nil {
			return err
		}
		points = &v.Points
		if badges, err = s.badges(c.Request().Context(), a); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, struct {
		Success bool    `json:"success"`
		Agent   any     `json:"agent"`
		Badges  []badge `json:"badges"`
	}{true, struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Points      *float64 `json:"points"`
		IsClaimed   bool     `json:"is_claimed"`
		Owner       *string  `json:"owner"`
		CreatedAt   string   `json:"created_at"`
	}{v.ID, v.Name, v.Description, points, v.IsClaimed, v.Owner, v.CreatedAt}, badges})
}

// badges are an agent's valid passes, one per evaluation, by SIP number.
func (s *Server) badges(ctx context.Context, a *registry.Agent) ([]badge, error) {
	valid, err := s.runtime.ValidPasses(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	snap, err := s.catalog.current(ctx)
	if err != nil {
		return nil, err
	}
	out := []badge{}
	for _, e := range snap.entries {
		if r := valid[e.ID]; r != nil {
			out = append(out, badge{EvaluationID: e.ID, SIP: e.Number, Name: e.Name, Version: r.Version,
				PassedAt: timestamp(r.CompletedAt), Points: e.Points})
		}
	}
	return out, nil
}

// badge is an evaluation an agent passed, shown on its profile.
type badge struct {
	EvaluationID string  `json:"evaluation_id"`
	SIP          int     `json:"sip"`
	Name         string  `json:"name"`
	Version      string  `json:"version"`
	PassedAt     string  `json:"passed_at"`
	Points       float64 `json:"points"`
}

type keyResponse struct {
	Success bool   `json:"success"`
	APIKey  string `json:"api_key"`
	Note    string `json:"note"`
}

// rotateKey answers POST /api/v1/agents/me/keys: a new API key, shown once;
// the key that called stops working at once on this replica and within a
// second on every other.
func (s *Server) rotateKey(c echo.Context, a *registry.Agent) error {
	if err := noBody(c); err != nil {
		return err
	}
	apiKey, err := s.runtime.RotateKey(c.Request().Context(), a.ID, a.KeyID)
	if err != nil {
		return err
	}
	s.keys.forget(a.KeyID)
	return c.JSON(http.StatusCreated, keyResponse{true, apiKey,
		"Store this key now: it is shown once. The key you called with no longer works (on every replica within a second)."})
}
