package api_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry"
)

func TestHealthAndMetadata(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, c *client, s registry.Store) {
		if resp := c.get("/healthz", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("healthz %d", resp.StatusCode)
		}
		var ready struct{ Status string }
		if resp := c.get("/readyz", &ready); resp.StatusCode != http.StatusOK || ready.Status != "ready" {
			t.Errorf("readyz %d %+v", resp.StatusCode, ready)
		}
		var doc map[string]any
		if resp := c.get("/api/v1/openapi.json", &doc); resp.StatusCode != http.StatusOK || doc["openapi"] != "3.0.3" {
			t.Errorf("openapi %d", resp.StatusCode)
		}
		c.get("/api/v1/evaluations", nil)
		resp := c.get("/metrics", nil)
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `sip_http_requests_total{code="200",method="GET",route="/api/v1/evaluations"} 1`) {
			t.Errorf("metrics %d:\n%s", resp.StatusCode, body)
		}
	})
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func TestErrorModel(t *testing.T) {
	t.Parallel()
	c := newClient(t, backends["sqlite"](t))
	for _, tt := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/api/v1/nothing", 404, "not_found"},
		{"GET", "/nothing", 404, "not_found"},
		{"POST", "/api/v1/evaluations", 405, "method_not_allowed"},
		{"DELETE", "/api/v1/evaluations/poaw", 405, "method_not_allowed"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			var e errorResponse
			resp := c.do(tt.method, tt.path, nil, nil, &e)
			if resp.StatusCode != tt.status || e.ErrorDetail.Code != tt.code || e.Success || e.Error == "" {
				t.Errorf("got %d %+v, want %d %s with a request id", resp.StatusCode, e, tt.status, tt.code)
			}
			if resp.Header.Get("X-Request-Id") != e.RequestID {
				t.Errorf("header request id %q, want the body's %q", resp.Header.Get("X-Request-Id"), e.RequestID)
			}
		})
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	c := newClient(t, backends["sqlite"](t))
	var e errorResponse
	resp := c.do("POST", "/api/v1/evaluations", strings.NewReader(strings.Repeat("x", 2<<20)), http.Header{"Content-Type": {"application/json"}}, &e)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || e.ErrorDetail.Code != "payload_too_large" {
		t.Errorf("%d %+v", resp.StatusCode, e)
	}
}

func TestRequestIDs(t *testing.T) {
	t.Parallel()
	c := newClient(t, backends["sqlite"](t))
	resp := c.do("GET", "/healthz", nil, http.Header{"X-Request-Id": {"trace-abc-12345"}}, nil)
	if got := resp.Header.Get("X-Request-Id"); got != "trace-abc-12345" {
		t.Errorf("caller's id not kept: %q", got)
	}
	for _, bad := range []string{"x", "<script>alert(1)</script>", strings.Repeat("a", 100)} {
		resp := c.do("GET", "/healthz", nil, http.Header{"X-Request-Id": {bad}}, nil)
		if got := resp.Header.Get("X-Request-Id"); got == bad || len(got) != 24 {
			t.Errorf("unsafe id %q kept as %q", bad, got)
		}
	}
}

// failingStore fails every call the way a database outage does, or panics.
type failingStore struct {
	registry.Store
	err   error
	panic bool
}

func (f failingStore) fail() error {
	if f.panic {
		panic("secret internal detail")
	}
	return f.err
}

func (f failingStore) SyncState(context.Context) (registry.SyncState, error) {
	return registry.SyncState{}, f.fail()
}
func (f failingStore) Ping(context.Context) error { return f.fail() }

func TestUnavailableAndInternal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		store  failingStore
		status int
		code   string
	}{
		{"database down", failingStore{err: fmt.Errorf("dial tcp: refused: %w", registry.ErrUnavailable)}, 503, "unavailable"},
		{"unexpected error", failingStore{err: errors.New("secret internal detail")}, 500, "internal"},
		{"panic", failingStore{panic: true}, 500, "internal"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs strings.Builder
			srv := httptest.NewServer(api.NewServer(api.Config{Catalog: registry.NewCatalog(tt.store), Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
			defer srv.Close()
			c := &client{Client: apitest.New(t, srv.URL), srv: srv}
			var e errorResponse
			resp := c.get("/api/v1/evaluations", &e)
			body := readAll(t, resp)
			if resp.StatusCode != tt.status || e.ErrorDetail.Code != tt.code || strings.Contains(body, "secret") {
				t.Errorf("%d %s", resp.StatusCode, body)
			}
			if tt.status >= 500 && !strings.Contains(logs.String(), e.RequestID) {
				t.Errorf("failure not logged with its request id:\n%s", logs.String())
			}
			if tt.status == 503 && resp.Header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			if !tt.store.panic {
				var ready struct{ Status string }
				if resp := c.get("/readyz", &ready); resp.StatusCode != 503 || ready.Status != "unavailable" {
					t.Errorf("readyz %d", resp.StatusCode)
				}
			}
		})
	}
}
