package webfetch_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry/credential"
	"github.com/sipregistry/sip/registry/credential/webfetch"
)

// TestFetch: a body within its bound is read; any other answer than 200
// names the status; a longer body is ErrTooLarge.
func TestFetch(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			if r.Header.Get("Accept") != "application/json" {
				http.Error(w, "accept", http.StatusNotAcceptable)
				return
			}
			w.Write([]byte(`{"ok":true}`))
		case "/big":
			w.Write([]byte(strings.Repeat("x", 101)))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c := webfetch.Client{Allow: loopback}
	for _, tt := range []struct {
		name, path, want string
		tooLarge         bool
	}{
		{"within its bound", "/ok", "", false},
		{"not found", "/missing", "404 Not Found", false},
		{"over its bound", "/big", "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, err := c.Fetch(t.Context(), srv.URL+tt.path, "application/json", 100)
			switch {
			case tt.tooLarge:
				if !errors.Is(err, credential.ErrTooLarge) {
					t.Errorf("Fetch: %v, want ErrTooLarge", err)
				}
			case tt.want != "":
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Fetch: %v, want an error naming %q", err, tt.want)
				}
			case err != nil || string(body) != `{"ok":true}`:
				t.Errorf("Fetch: %q, %v", body, err)
			}
		})
	}
}

// TestIssuersFetchOnlyTheIssuerNamed: the keys of a presented credential
// are looked up only in its issuer's document, never another URL.
func TestIssuersFetchOnlyTheIssuerNamed(t *testing.T) {
	t.Parallel()
	fetched := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fetched++; http.NotFound(w, r) }))
	t.Cleanup(srv.Close)
	keys := webfetch.NewIssuers(webfetch.Client{Allow: loopback}).KeysOf("did:web:trusted.example")
	if _, err := keys.PublicKey("did:web:" + strings.TrimPrefix(srv.URL, "http://") + "#key-1"); err == nil || !strings.Contains(err.Error(), "not a trusted issuer") {
		t.Errorf("another issuer's key: %v, want refused", err)
	}
	if fetched != 0 {
		t.Errorf("%d requests to an issuer not named", fetched)
	}
}
