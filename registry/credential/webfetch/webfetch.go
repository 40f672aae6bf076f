// Package webfetch fetches other registries' documents (DID documents,
// status list credentials) over HTTP(S) for registry/credential, which
// reaches the network only through its Fetcher interface.
//
// A fetch never leaves the host it was asked for: a redirect to another
// scheme, host or port is refused. And it never reaches this machine or
// its network: every address connected to, after DNS, must be public
// (PublicOnly) unless the Client's Allow says otherwise, so neither a
// redirect nor a name that resolves to 127.0.0.1, 10.0.0.0/8 or the
// cloud's metadata address turns a credential check into a request to an
// internal service. The one exception is an issuer whose did:web names a
// loopback IP address itself (did:web:127.0.0.1%3A8443): a development
// registry on the same machine, which only a SIP's trusted issuers can
// name.
package webfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/sipregistry/sip/registry/credential"
)

// DefaultTimeout bounds one fetch when the Client sets none.
const DefaultTimeout = 10 * time.Second

// maxRedirects bounds the redirects one fetch follows (on its own host).
const maxRedirects = 5

// ErrAddressRefused is a fetch that would connect to an address the
// Client does not allow (errors.Is).
var ErrAddressRefused = errors.New("refused to connect to a loopback, private or otherwise non-public address")

// ErrRedirectOffHost is a redirect to another scheme, host or port.
var ErrRedirectOffHost = errors.New("refused a redirect off the issuer's host")

// PublicOnly is the default dial policy: a public unicast address, not
// loopback, private (RFC 1918, unique local), link-local (the cloud
// metadata service), shared (100.64.0.0/10), unspecified or multicast.
func PublicOnly(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && ip.IsGlobalUnicast() && !ip.IsPrivate() && !cgnat.Contains(ip) && !ip.IsLoopback() && !ip.IsLinkLocalUnicast()
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// Client is a credential.Fetcher over HTTP(S).
type Client struct {
	// Timeout bounds one fetch, redirects included (DefaultTimeout when
	// zero).
	Timeout time.Duration
	// Allow says which addresses may be connected to (PublicOnly when
	// nil). Tests that serve on loopback allow it explicitly.
	Allow func(netip.Addr) bool
}

// Fetch GETs url and reads its body, at most max bytes, following
// redirects only on url's own scheme, host and port, and connecting only
// to allowed addresses.
func (c Client) Fetch(ctx context.Context, rawURL, accept string, max int64) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", rawURL)
	}
	allow := c.Allow
	if allow == nil {
		allow = PublicOnly
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && ip.IsLoopback() {
		// The issuer names a loopback address itself: a development
		// registry on this machine.
		named := ip
		base := allow
		allow = func(a netip.Addr) bool { return a.Unmap() == named.Unmap() || base(a) }
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !allow(ap.Addr()) {
			return fmt.Errorf("%s: %w", address, ErrAddressRefused)
		}
		return nil
	}}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	transport := &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true, ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: 5 * time.Second, ResponseHeaderTimeout: timeout, Proxy: nil}
	defer transport.CloseIdleConnections()
	client := &http.Client{Timeout: timeout, Transport: transport, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("more than %d redirects", maxRedirects)
		}
		if req.URL.Scheme != u.Scheme || req.URL.Host != u.Host {
			return fmt.Errorf("%s to %s://%s: %w", rawURL, req.URL.Scheme, req.URL.Host, ErrRedirectOffHost)
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", rawURL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil || int64(len(body)) > max {
		return nil, credential.ErrTooLarge
	}
	return body, nil
}

// Issuers reaches other registries over HTTP(S) for credentials
// presented to this one (an evaluation.Issuers): the keys of one issuer
// at a time, from its DID document and no other's, and status lists,
// through one WebStatus that remembers the newest list it saw of each
// address (a list replayed from before a revocation is refused). Make it
// with NewIssuers and keep it for as long as the server runs.
type Issuers struct {
	fetch  Client
	once   sync.Once
	status *credential.WebStatus
}

// NewIssuers fetches through c.
func NewIssuers(c Client) *Issuers { return &Issuers{fetch: c} }

// KeysOf resolves keys of issuer only.
func (i *Issuers) KeysOf(issuer string) credential.KeyResolver {
	return &credential.WebResolver{Fetch: i.fetch, Allow: func(did string) bool { return did == issuer }}
}

// Status fetches status lists.
func (i *Issuers) Status() credential.StatusSource {
	i.once.Do(func() { i.status = &credential.WebStatus{Fetch: i.fetch} })
	return i.status
}
