package webfetch_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sipregistry/sip/registry/credential/webfetch"
)

func loopback(ip netip.Addr) bool { return ip.IsLoopback() }

// serve answers /doc with a body and /to?u=URL with a redirect to URL.
func serve(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/doc":
			w.Write([]byte(`{"ok":true}`))
		case "/to":
			http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// TestRedirectsStayOnTheIssuersHost: a redirect on the same scheme, host
// and port is followed; one anywhere else, loopback included, is refused.
func TestRedirectsStayOnTheIssuersHost(t *testing.T) {
	t.Parallel()
	a, b := serve(t), serve(t)
	c := webfetch.Client{Allow: loopback}
	to := func(u string) string { return a.URL + "/to?u=" + url.QueryEscape(u) }
	port := a.URL[strings.LastIndex(a.URL, ":"):]
	for _, tt := range []struct {
		name, url string
		ok        bool
	}{
		{"no redirect", a.URL + "/doc", true},
		{"on the same host", to(a.URL + "/doc"), true},
		{"to another port", to(b.URL + "/doc"), false},
		{"to another name of the host", to("http://localhost" + port + "/doc"), false},
		{"to another loopback address", to("http://127.0.0.2" + port + "/doc"), false},
		{"to https", to(strings.Replace(a.URL, "http:", "https:", 1) + "/doc"), false},
		{"to the metadata service", to("http://169.254.169.254/latest/meta-data/"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, err := c.Fetch(t.Context(), tt.url, "application/json", 1<<10)
			if tt.ok && (err != nil || string(body) != `{"ok":true}`) {
				t.Errorf("Fetch = %q, %v; want the document", body, err)
			}
			if !tt.ok && !errors.Is(err, webfetch.ErrRedirectOffHost) {
				t.Errorf("Fetch = %q, %v; want a refused redirect", body, err)
			}
		})
	}
}

// TestNeverToPrivateAddresses: by default a fetch connects to public
// addresses only: a name that resolves to loopback is refused before any
// request is sent, and an issuer's own loopback IP is the one address of
// this machine it may reach.
func TestNeverToPrivateAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); w.Write([]byte("{}")) }))
	t.Cleanup(s.Close)
	port := s.URL[strings.LastIndex(s.URL, ":"):]
	var c webfetch.Client // the default policy
	if _, err := c.Fetch(t.Context(), "http://localhost"+port+"/doc", "application/json", 1<<10); !errors.Is(err, webfetch.ErrAddressRefused) {
		t.Errorf("a name resolving to loopback: %v, want ErrAddressRefused", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the refused fetch reached the server %d times", n)
	}
	if _, err := c.Fetch(t.Context(), s.URL+"/doc", "application/json", 1<<10); err != nil {
		t.Errorf("an issuer naming its own loopback IP: %v", err)
	}
	if _, err := (webfetch.Client{Allow: loopback}).Fetch(t.Context(), "http://localhost"+port+"/doc", "application/json", 1<<10); err != nil {
		t.Errorf("with loopback allowed explicitly: %v", err)
	}
}

func TestPublicOnly(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		addr string
		ok   bool
	}{
		{"93.184.216.34", true},
		{"2606:2800:220:1:248:1893:25c8:1946", true},
		{"127.0.0.1", false},
		{"127.1.2.3", false},
		{"::1", false},
		{"::ffff:127.0.0.1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"100.64.0.1", false},
		{"169.254.169.254", false},
		{"fe80::1", false},
		{"fd00::1", false},
		{"0.0.0.0", false},
		{"::", false},
		{"224.0.0.1", false},
		{"ff02::1", false},
	} {
		t.Run(tt.addr, func(t *testing.T) {
			if got := webfetch.PublicOnly(netip.MustParseAddr(tt.addr)); got != tt.ok {
				t.Errorf("PublicOnly(%s) = %v, want %v", tt.addr, got, tt.ok)
			}
		})
	}
}
