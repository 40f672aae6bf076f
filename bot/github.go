package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v62/github"
)

// DefaultAPIURL is GitHub's REST API; GitHub Enterprise Server answers at
// https://HOST/api/v3.
const DefaultAPIURL = "https://api.github.com"

// clients makes GitHub clients: one for the App itself (signed with a JWT
// on every request) and one per installation, cached, so that an
// installation token is minted once an hour rather than once per event.
type clients struct {
	apiURL string // without a trailing slash
	apps   *ghinstallation.AppsTransport
	app    *github.Client
	base   http.RoundTripper
	mu     sync.Mutex
	byID   map[int64]*installation
}

type installation struct {
	transport *ghinstallation.Transport
	client    *github.Client
}

func newClients(appID int64, privateKey []byte, apiURL string, base http.RoundTripper) (*clients, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	apiURL = strings.TrimRight(apiURL, "/")
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	if _, err := url.Parse(apiURL + "/"); err != nil {
		return nil, fmt.Errorf("GitHub API URL %q: %w", apiURL, err)
	}
	atr, err := ghinstallation.NewAppsTransport(base, appID, privateKey)
	if err != nil {
		return nil, fmt.Errorf("GitHub App private key: %w", err)
	}
	atr.BaseURL = apiURL
	c := &clients{apiURL: apiURL, apps: atr, base: base, byID: map[int64]*installation{}}
	c.app = c.newClient(atr)
	return c, nil
}

// newClient builds a go-github client on a transport, pointed at the
// configured API (the trailing slash is required by go-github).
func (c *clients) newClient(tr http.RoundTripper) *github.Client {
	gh := github.NewClient(&http.Client{Transport: tr, Timeout: 30 * time.Second})
	u, _ := url.Parse(c.apiURL + "/")
	gh.BaseURL = u
	gh.UploadURL = u
	return gh
}

// installation returns the client of an installation.
func (c *clients) installation(id int64) *installation {
	c.mu.Lock()
	defer c.mu.Unlock()
	if in, ok := c.byID[id]; ok {
		return in
	}
	itr := ghinstallation.NewFromAppsTransport(c.apps, id)
	itr.BaseURL = c.apiURL
	// The default token client has no timeout, and a hung token request
	// would block every caller of the installation.
	itr.Client = &http.Client{Timeout: 30 * time.Second, Transport: c.base}
	in := &installation{transport: itr, client: c.newClient(itr)}
	c.byID[id] = in
	return in
}

// forget drops an installation's cached token (uninstalled, suspended).
func (c *clients) forget(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, id)
}

// gitToken returns a token for go-git, sent as user x-access-token. It
// has at least ten minutes left, so a fetch never outlives it.
func (c *clients) gitToken(ctx context.Context, id int64) (string, error) {
	in := c.installation(id)
	tok, err := in.transport.Token(ctx)
	if err != nil {
		return "", err
	}
	if exp, _, err := in.transport.Expiry(); err == nil && time.Until(exp) < 10*time.Minute {
		// Token refreshes only in a token's last minute: mint a fresh
		// one with a throwaway transport for a long fetch.
		itr := ghinstallation.NewFromAppsTransport(c.apps, id)
		itr.BaseURL, itr.Client = c.apiURL, in.transport.Client
		return itr.Token(ctx)
	}
	return tok, nil
}

// uninstalled reports whether err says the App is no longer installed
// where the work was meant to happen: GitHub refused to mint the
// installation's token with 404. No retry can succeed, so the work is
// given up at once instead of holding its key through every retry (the
// uninstallation's own delivery shares that key).
func uninstalled(err error) bool {
	var he *ghinstallation.HTTPError
	return errors.As(err, &he) && he.Response != nil && he.Response.StatusCode == http.StatusNotFound
}
