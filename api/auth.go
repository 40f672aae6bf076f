package api

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

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
	a, err := s.runtime.AgentByKeyID(c.Request().Context(), id)
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

// keyCache remembers which agent an API key id belongs to, with the key's
// hash for a second (keyCacheTTL), so the endpoints an agent calls many
// times a second, the evaluation lifecycle and session messages,
// authenticate with at most one query a second per key, and a key rotated
// on any replica stops working everywhere within a second: the whole key is
// still compared with the hash, in constant time, on every request.
type keyCache struct {
	mu sync.Mutex
	m  map[string]cachedKey
}

type cachedKey struct {
	agentID, keyHash string
	until            time.Time // checked against the database again after this
}

// keyCacheTTL bounds how long a replica trusts a remembered key: a key
// rotated on another replica stops working here within it.
const keyCacheTTL = time.Second

// forget drops a key id from this replica's cache (its key was rotated).
func (k *keyCache) forget(id string) {
	k.mu.Lock()
	delete(k.m, id)
	k.mu.Unlock()
}

const maxCachedKeys = 100_000

// withCaller wraps a handler that needs only the caller's id (the agent it
// is given holds nothing else).
func (s *Server) withCaller(h func(c echo.Context, a *registry.Agent) error) echo.HandlerFunc {
	full := s.withAgent(h)
	return func(c echo.Context) error {
		key, ok := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
		key = strings.TrimSpace(key)
		id := registry.KeyID(key)
		if !ok || id == "" {
			return full(c)
		}
		s.keys.mu.Lock()
		k, hit := s.keys.m[id]
		s.keys.mu.Unlock()
		if !hit || !s.now().Before(k.until) {
			a, err := s.authenticate(c)
			if err != nil {
				return full(c) // answers the refusal as every endpoint does
			}
			s.keys.mu.Lock()
			if s.keys.m == nil || len(s.keys.m) >= maxCachedKeys {
				s.keys.m = map[string]cachedKey{}
			}
			s.keys.m[id] = cachedKey{a.ID, a.KeyHash, s.now().Add(keyCacheTTL)}
			s.keys.mu.Unlock()
			return h(c, a)
		}
		if !registry.KeyMatches(key, k.keyHash) {
			return full(c)
		}
		return h(c, &registry.Agent{ID: k.agentID})
	}
}

// viewerID is the id of the agent a request is made by, "" for anyone.
func viewerID(a *registry.Agent) string {
	if a == nil {
		return ""
	}
	return a.ID
}
