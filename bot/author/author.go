// Package author acts on GitHub as a person who signed in to the registry
// through the GitHub App's user-to-server authorization: it exchanges the
// sign-in code for the person's token, and with that token opens a pull
// request as its author (forking when the person cannot push, branching
// from the current head of the default branch every time) and reads its
// checks and reviews.
package author

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/proposal"
)

// Client is the App as its users' agent.
type Client struct {
	// APIURL is GitHub's REST API (https://api.github.com; GitHub
	// Enterprise Server: https://HOST/api/v3).
	APIURL string
	// WebURL is where people sign in (https://github.com, or the
	// Enterprise Server's host).
	WebURL string
	// ClientID and ClientSecret are the App's OAuth credentials.
	ClientID, ClientSecret string
	// HTTP makes the requests (a client with a 30 s timeout when nil).
	HTTP *http.Client
}

// ErrForkRefused is GitHub refusing to fork the repository for a person
// who cannot push to it (forking is off for the repository or its
// organisation, or the person may not fork).
var ErrForkRefused = fmt.Errorf("GitHub refused to fork the repository for you: %w", registry.ErrForbidden)

// ErrExchange is a sign-in code GitHub did not take (unknown, used,
// expired, or the App's credentials wrong).
var ErrExchange = fmt.Errorf("GitHub did not accept the sign-in: %w", registry.ErrUnauthorized)

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// WebURLFor is where people sign in for an API: github.com for GitHub's
// API, the host of an Enterprise Server's /api/v3, else the API's own
// address (a test's fake serves both).
func WebURLFor(apiURL string) string {
	apiURL = strings.TrimRight(apiURL, "/")
	switch {
	case apiURL == "" || apiURL == "https://api.github.com":
		return "https://github.com"
	case strings.HasSuffix(apiURL, "/api/v3"):
		return strings.TrimSuffix(apiURL, "/api/v3")
	}
	return apiURL
}

// AuthorizeURL is GitHub's sign-in page for the App, which sends the
// person back to redirectURI with a code and state.
func (c *Client) AuthorizeURL(state, redirectURI string) string {
	q := url.Values{"client_id": {c.ClientID}, "state": {state}, "redirect_uri": {redirectURI}}
	return strings.TrimRight(c.WebURL, "/") + "/login/oauth/authorize?" + q.Encode()
}

// Exchange trades a sign-in code for the person's token.
func (c *Client) Exchange(ctx context.Context, code, redirectURI string) (string, error) {
	form := url.Values{"client_id": {c.ClientID}, "client_secret": {c.ClientSecret}, "code": {code}, "redirect_uri": {redirectURI}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.WebURL, "/")+"/login/oauth/access_token",
		strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http().Do(req)
	if err != nil {
		return "", fmt.Errorf("GitHub's sign-in: %w", registry.ErrUnavailable)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	if resp.StatusCode >= 500 {
		return "", fmt.Errorf("GitHub's sign-in answered %d: %w", resp.StatusCode, registry.ErrUnavailable)
	}
	// GitHub answers 200 with an error field for a bad code; the error
	// names what went wrong, never a secret.
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&out); err != nil || out.AccessToken == "" {
		if out.Error != "" {
			return "", fmt.Errorf("%w (%s)", ErrExchange, out.Error)
		}
		return "", ErrExchange
	}
	return out.AccessToken, nil
}

// as is a REST client with the person's token.
func (c *Client) as(token string) *github.Client {
	gh := github.NewClient(c.http()).WithAuthToken(token)
	api := strings.TrimRight(c.APIURL, "/")
	if api == "" {
		api = "https://api.github.com"
	}
	u, _ := url.Parse(api + "/")
	gh.BaseURL, gh.UploadURL = u, u
	return gh
}

// Login is the login of the token's person.
func (c *Client) Login(ctx context.Context, token string) (string, error) {
	u, _, err := c.as(token).Users.Get(ctx, "")
	if err != nil {
		return "", describe(err, "reading your GitHub account")
	}
	if u.GetLogin() == "" {
		return "", fmt.Errorf("GitHub named no account for the token: %w", registry.ErrUnauthorized)
	}
	return u.GetLogin(), nil
}

// describe turns GitHub's answers into the domain's error kinds.
func describe(err error, doing string) error {
	var ge *github.ErrorResponse
	if errors.As(err, &ge) && ge.Response != nil {
		switch s := ge.Response.StatusCode; {
		case s == http.StatusUnauthorized:
			return fmt.Errorf("%s: GitHub no longer accepts your sign-in (%s): %w", doing, ge.Message, registry.ErrUnauthorized)
		case s == http.StatusForbidden:
			return fmt.Errorf("%s: GitHub refused (%s): %w", doing, ge.Message, registry.ErrForbidden)
		case s == http.StatusNotFound:
			return fmt.Errorf("%s: GitHub found nothing (%s): %w", doing, ge.Message, registry.ErrNotFound)
		case s == http.StatusConflict || s == http.StatusUnprocessableEntity:
			return fmt.Errorf("%s: GitHub refused (%s): %w", doing, ge.Message, registry.ErrConflict)
		case s >= 500:
			return fmt.Errorf("%s: GitHub answered %d: %w", doing, s, registry.ErrUnavailable)
		}
	}
	var rl *github.RateLimitError
	var arl *github.AbuseRateLimitError
	if errors.As(err, &rl) || errors.As(err, &arl) {
		return fmt.Errorf("%s: GitHub's rate limit: %w", doing, registry.ErrUnavailable)
	}
	return fmt.Errorf("%s: %v: %w", doing, err, registry.ErrUnavailable)
}

var _ proposal.GitHub = (*Client)(nil)
