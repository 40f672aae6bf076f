// Package apitest holds every HTTP response a test sees to the API's
// OpenAPI document: the operation's response schema, or the Error schema
// for paths the API does not have.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/sipregistry/sip/api"
)

var (
	specOnce sync.Once
	spec     *openapi3.T
	specErr  error
)

// Spec returns the API's OpenAPI document, loaded and validated once.
func Spec(t testing.TB) *openapi3.T {
	t.Helper()
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

// Client calls a server at BaseURL and checks every response.
type Client struct {
	T       testing.TB
	BaseURL string
	HTTP    *http.Client
	router  routers.Router
	doc     *openapi3.T
}

// New returns a client for the server at baseURL.
func New(t testing.TB, baseURL string) *Client {
	t.Helper()
	doc := Spec(t)
	local := *doc // the document's relative server, pointed at this one
	local.Servers = openapi3.Servers{{URL: baseURL}}
	r, err := legacy.NewRouter(&local)
	if err != nil {
		t.Fatal(err)
	}
	return &Client{T: t, BaseURL: baseURL, HTTP: http.DefaultClient, router: r, doc: doc}
}

// Get calls path and decodes the JSON body into out (when not nil).
func (c *Client) Get(path string, out any) *http.Response {
	c.T.Helper()
	return c.Do(http.MethodGet, path, nil, nil, out)
}

// Do sends a request, checks the response, decodes it into out (when not
// nil), and returns it with its body still readable.
func (c *Client) Do(method, path string, body io.Reader, header http.Header, out any) *http.Response {
	c.T.Helper()
	var sent []byte
	if body != nil {
		var err error
		if sent, err = io.ReadAll(body); err != nil {
			c.T.Fatal(err)
		}
		body = bytes.NewReader(sent)
	}
	req, err := http.NewRequestWithContext(c.T.Context(), method, c.BaseURL+path, body)
	if err != nil {
		c.T.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatal(err)
	}
	c.Check(req, resp, raw)
	if resp.StatusCode < 300 {
		c.checkRequest(method, path, sent, header)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.T.Fatalf("%s %s: %v\n%s", method, path, err, raw)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return resp
}

// Check holds one response (with its raw body) to the document.
func (c *Client) Check(req *http.Request, resp *http.Response, raw []byte) {
	c.T.Helper()
	if resp.Header.Get("X-Request-Id") == "" {
		c.T.Errorf("%s %s: no X-Request-Id", req.Method, req.URL.Path)
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			c.T.Errorf("%s %s: body is not JSON: %s", req.Method, req.URL.Path, raw)
			return
		}
		if err := c.doc.Components.Schemas["Error"].Value.VisitJSON(v); err != nil {
			c.T.Errorf("%s %s (%d): not an Error: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, err, raw)
		}
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	err = openapi3filter.ValidateResponse(c.T.Context(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(raw)), Options: &openapi3filter.Options{IncludeResponseStatus: true},
	})
	if err != nil {
		c.T.Errorf("%s %s (%d) does not match the OpenAPI document: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, err, clip(raw))
	}
}

// checkRequest holds a request the server accepted to the document: what
// the server takes, the document must describe.
func (c *Client) checkRequest(method, path string, body []byte, header http.Header) {
	c.T.Helper()
	req, err := http.NewRequestWithContext(c.T.Context(), method, c.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		c.T.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		c.T.Errorf("%s %s was accepted but the document has no such operation", method, path)
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(c.T.Context(), in); err != nil {
		c.T.Errorf("%s %s was accepted but does not match the OpenAPI document: %v\n%s", method, path, err, clip(body))
	}
}

// ErrorSchema returns the document's Error schema.
func (c *Client) ErrorSchema() *openapi3.Schema { return c.doc.Components.Schemas["Error"].Value }

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
