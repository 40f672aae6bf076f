package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
)

// DefaultOEmbedURL is X's public oEmbed endpoint.
const DefaultOEmbedURL = "https://publish.twitter.com/oembed"

var (
	tweetPathRE = regexp.MustCompile(`^/([A-Za-z0-9_]{1,15})/status(es)?/([0-9]{1,25})/?$`)
	handleRE    = regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`)
	tagRE       = regexp.MustCompile(`<[^>]*>`)
	tweetHosts  = map[string]bool{"x.com": true, "www.x.com": true, "twitter.com": true, "www.twitter.com": true, "mobile.twitter.com": true}
)

type claimRequest struct {
	ClaimToken string `json:"claim_token"`
	TweetURL   string `json:"tweet_url"`
}

// claim answers POST /api/v1/agents/claim. The human owner proves two
// things: they hold the claim token (the secret in the claim URL given at
// registration), and the tweet they posted contains the agent's
// verification code. The owner recorded is the tweet's author as X's
// oEmbed endpoint reports it, not anything the caller says.
func (s *Server) claim(c echo.Context) error {
	var req claimRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	claimed, err := s.claimWith(c, req.ClaimToken, req.TweetURL)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, agentResponse{true, toAgentView(claimed)})
}

// claimWith claims the agent of token with the post at tweetURL.
func (s *Server) claimWith(c echo.Context, token, tweetURL string) (*registry.Agent, error) {
	req := claimRequest{ClaimToken: token, TweetURL: tweetURL}
	if req.ClaimToken == "" || len(req.ClaimToken) > 200 {
		return nil, badRequest("claim_token", "claim_token is required", "Use the token at the end of the claim URL.")
	}
	u, err := url.Parse(req.TweetURL)
	if err != nil || u.Scheme != "https" || !tweetHosts[strings.ToLower(u.Host)] || !tweetPathRE.MatchString(u.Path) {
		return nil, badRequest("tweet_url", "tweet_url must be the https URL of a post on X", "For example https://x.com/you/status/1234567890.")
	}
	ctx := c.Request().Context()
	tokenHash := registry.HashSecret(req.ClaimToken)
	a, err := s.agents.AgentByClaimToken(ctx, tokenHash)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, notFound("no agent has this claim token", "Use the claim URL the agent received when it registered.")
	}
	if err != nil {
		return nil, err
	}
	if a.Claimed() {
		return nil, &Error{Status: http.StatusConflict, Code: "conflict", Message: "the agent is already claimed", Hint: "An agent has one owner."}
	}
	post, err := s.fetchOEmbed(ctx, req.TweetURL)
	if err != nil {
		return nil, err
	}
	owner, ok := handleOf(post.AuthorURL)
	if !ok {
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "X did not say who wrote the post",
			Hint: "Try again later.", Err: fmt.Errorf("oEmbed author_url %q", post.AuthorURL)}
	}
	text := html.UnescapeString(tagRE.ReplaceAllString(post.HTML, " "))
	if !strings.Contains(strings.ToUpper(text), strings.ToUpper(a.VerificationCode)) {
		return nil, &Error{Status: http.StatusForbidden, Code: "forbidden", Message: "the post does not contain the verification code",
			Hint: "Post a tweet that contains " + a.VerificationCode + ", then send its URL."}
	}
	claimed, err := s.agents.ClaimAgent(ctx, tokenHash, owner, s.now())
	if errors.Is(err, registry.ErrConflict) {
		return nil, &Error{Status: http.StatusConflict, Code: "conflict", Message: "the agent is already claimed", Hint: "An agent has one owner.", Err: err}
	}
	if err != nil {
		return nil, err
	}
	return claimed, nil
}

type oembed struct {
	AuthorURL string `json:"author_url"`
	HTML      string `json:"html"`
}

// fetchOEmbed reads a post through the oEmbed endpoint, with a deadline
// and a size cap; any failure of X's side is a 503 for the caller.
func (s *Server) fetchOEmbed(ctx context.Context, tweetURL string) (*oembed, error) {
	unavailable := func(err error) error {
		return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "cannot read the post from X right now",
			Hint: "Try again in a minute.", Err: err}
	}
	endpoint, err := url.Parse(s.oembedURL)
	if err != nil {
		return nil, unavailable(err)
	}
	q := endpoint.Query()
	q.Set("url", tweetURL)
	q.Set("omit_script", "true")
	endpoint.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint.String(), nil)
	if err != nil {
		return nil, unavailable(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.httpClient.Do(req)
	if err != nil {
		return nil, unavailable(err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusForbidden:
		return nil, &Error{Status: http.StatusForbidden, Code: "forbidden", Message: "X cannot show this post (deleted, private or not found)",
			Hint: "Post a public tweet with the verification code."}
	case resp.StatusCode != http.StatusOK:
		return nil, unavailable(fmt.Errorf("oEmbed status %d", resp.StatusCode))
	}
	var post oembed
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<10)).Decode(&post); err != nil {
		return nil, unavailable(fmt.Errorf("oEmbed body: %w", err))
	}
	return &post, nil
}

// handleOf reads the X handle from an oEmbed author_url.
func handleOf(authorURL string) (string, bool) {
	u, err := url.Parse(authorURL)
	if err != nil || !tweetHosts[strings.ToLower(u.Host)] {
		return "", false
	}
	h := strings.Trim(u.Path, "/")
	return h, handleRE.MatchString(h)
}
