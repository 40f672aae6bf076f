package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/postgres"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/sqlite"
)

type migrator interface {
	registry.Store
	Migrate(context.Context) error
}

// backends opens a fresh, migrated store of each kind.
var backends = map[string]func(t testing.TB) registry.Store{
	"sqlite": func(t testing.TB) registry.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "r.db"))
		return migrated(t, s, err)
	},
	"postgres": func(t testing.TB) registry.Store {
		s, err := postgres.Open(t.Context(), postgrestest.URL(t))
		return migrated(t, s, err)
	},
}

func migrated(t testing.TB, s migrator, err error) registry.Store {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

// forEachBackend runs fn against a server on each store.
func forEachBackend(t *testing.T, fn func(t *testing.T, c *client, s registry.Store)) {
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			fn(t, newClient(t, s), s)
		})
	}
}

// client calls a test server and holds every response to the OpenAPI
// document.
type client struct {
	t      *testing.T
	srv    *httptest.Server
	router routers.Router
	doc    *openapi3.T
}

var (
	specOnce sync.Once
	spec     *openapi3.T
	specErr  error
)

func loadSpec(t *testing.T) *openapi3.T {
	specOnce.Do(func() {
		raw, err := api.OpenAPI()
		if err != nil {
			specErr = err
			return
		}
		spec, specErr = openapi3.NewLoader().LoadFromData(raw)
		if specErr == nil {
			specErr = spec.Validate(context.Background())
		}
	})
	if specErr != nil {
		t.Fatalf("OpenAPI document: %v", specErr)
	}
	return spec
}

func newClient(t *testing.T, s registry.Store) *client {
	t.Helper()
	doc := loadSpec(t)
	srv := httptest.NewServer(api.NewServer(api.Config{Store: s, Logger: slog.New(slog.DiscardHandler), Version: "test"}))
	t.Cleanup(srv.Close)
	return &client{t: t, srv: srv, router: mustRouter(t, doc, srv.URL), doc: doc}
}

// get calls path and decodes the JSON body into out (if not nil).
func (c *client) get(path string, out any) *http.Response {
	c.t.Helper()
	return c.do(http.MethodGet, path, nil, nil, out)
}

func (c *client) do(method, path string, body io.Reader, header http.Header, out any) *http.Response {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.srv.URL+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	c.check(req, resp, raw)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: %v\n%s", method, path, err, raw)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return resp
}

// check holds a response to the OpenAPI document: the operation's
// response schema, or the Error schema for paths the API does not have.
func (c *client) check(req *http.Request, resp *http.Response, raw []byte) {
	c.t.Helper()
	if resp.Header.Get("X-Request-Id") == "" {
		c.t.Errorf("%s %s: no X-Request-Id", req.Method, req.URL.Path)
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			c.t.Errorf("%s %s: body is not JSON: %s", req.Method, req.URL.Path, raw)
			return
		}
		if err := c.doc.Components.Schemas["Error"].Value.VisitJSON(v); err != nil {
			c.t.Errorf("%s %s (%d): not an Error: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, err, raw)
		}
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	err = openapi3filter.ValidateResponse(c.t.Context(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(raw)), Options: &openapi3filter.Options{IncludeResponseStatus: true},
	})
	if err != nil {
		c.t.Errorf("%s %s (%d) does not match the OpenAPI document: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, err, clip(raw))
	}
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func syncFiles(t *testing.T, s registry.Store, commit string, files ...registry.File) {
	t.Helper()
	if r, err := registry.Sync(t.Context(), s, registry.Source{Files: files, Commit: commit, Name: "test"}, t0); err != nil {
		t.Fatalf("sync: %v %+v", err, r)
	}
}

func fixture() []registry.File {
	doc := siptest.Set(siptest.SIP(1, "process", "active"), "type: ", "type: process")
	doc = siptest.Set(doc, "executable:", "")
	doc = siptest.Set(doc, "  handler:", "")
	return []registry.File{
		doc,
		siptest.SIP(2, "alpha", "active"),
		siptest.SIP(3, "beta", "active", "alpha"),
		siptest.Set(siptest.SIP(4, "gamma", "draft", "beta"), "module: ", "module: safety"),
	}
}

type errorResponse struct {
	Success     bool   `json:"success"`
	Error       string `json:"error"`
	RequestID   string `json:"request_id"`
	ErrorDetail struct {
		Code  string `json:"code"`
		Field string `json:"field"`
	} `json:"error_detail"`
}

type evaluationList struct {
	Success     bool `json:"success"`
	Evaluations []struct {
		ID            string   `json:"id"`
		SIP           int      `json:"sip"`
		Status        string   `json:"status"`
		Prerequisites []string `json:"prerequisites"`
		CanRegister   bool     `json:"can_register"`
	} `json:"evaluations"`
}

func (l evaluationList) ids() string {
	var out []string
	for _, e := range l.Evaluations {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}

// mustRouter routes requests to the document's operations; the document's
// relative server is pointed at the test server.
func mustRouter(t *testing.T, doc *openapi3.T, url string) routers.Router {
	t.Helper()
	local := *doc
	local.Servers = openapi3.Servers{{URL: url}}
	r, err := legacy.NewRouter(&local)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
