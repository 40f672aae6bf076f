package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
)

var errUnauthorized = &Error{Status: http.StatusUnauthorized, Code: "unauthorized",
	Message: "missing or invalid API key", Hint: "Send Authorization: Bearer <api_key>, the key shown when the agent registered."}

// authenticate returns the agent whose API key the request carries. The
// key's public id finds the agent; the whole key is then compared by hash
// in constant time, so response times say nothing about the secret.
func (s *Server) authenticate(c echo.Context) (*registry.Agent, error) {
	h := c.Request().Header.Get("Authorization")
	key, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return nil, errUnauthorized
	}
	key = strings.TrimSpace(key)
	id := registry.KeyID(key)
	if id == "" {
		return nil, errUnauthorized
	}
	a, err := s.agents.AgentByKeyID(c.Request().Context(), id)
	if errors.Is(err, registry.ErrNotFound) {
		registry.KeyMatches(key, strings.Repeat("0", 64)) // same work as a real comparison
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, err
	}
	if !registry.KeyMatches(key, a.KeyHash) {
		return nil, errUnauthorized
	}
	return a, nil
}

// withAgent wraps a handler that needs the calling agent.
func (s *Server) withAgent(h func(c echo.Context, a *registry.Agent) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		a, err := s.authenticate(c)
		if err == errUnauthorized {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="sip"`)
		}
		if err != nil {
			return err
		}
		return h(c, a)
	}
}
