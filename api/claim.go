package api

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry/evaluation"
)

// DefaultOEmbedURL is X's public oEmbed endpoint.
const DefaultOEmbedURL = "https://publish.twitter.com/oembed"

var (
	handleRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`) })
	tagRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[^>]*>`) })
)

type claimRequest struct {
	ClaimToken string `json:"claim_token"`
	TweetURL   string `json:"tweet_url"`
	// DevOwner claims without X, on a development registry only.
	DevOwner string `json:"dev_owner"`
}

// claim answers POST /api/v1/agents/claim: the service checks the claim
// token and that the post contains the agent's verification code.
func (s *Server) claim(c echo.Context) error {
	var req claimRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	claim, by := s.runtime.ClaimAgent, req.TweetURL
	if req.DevOwner != "" && req.TweetURL == "" {
		// Refused unless the registry runs for development (sip serve
		// --dev-claims, on loopback only).
		claim, by = s.runtime.DevelopmentClaim, req.DevOwner
	}
	claimed, err := claim(c.Request().Context(), req.ClaimToken, by)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, agentResponse{true, toAgentView(claimed)})
}

// OEmbed reads posts on X through its oEmbed endpoint, for agents'
// claims (an evaluation.PostReader).
type OEmbed struct {
	// URL is the endpoint (DefaultOEmbedURL when empty).
	URL string
	// Client calls it (a client with a 10 s timeout when nil).
	Client *http.Client
}

// ReadPost reads the author's handle and the text of the post at
// tweetURL; any failure of X's side is a 503 for the caller.
func (o *OEmbed) ReadPost(ctx context.Context, tweetURL string) (author, text string, _ error) {
	post, err := o.fetch(ctx, tweetURL)
	if err != nil {
		return "", "", err
	}
	owner, ok := handleOf(post.AuthorURL)
	if !ok {
		return "", "", &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "X did not say who wrote the post",
			Hint: "Try again later.", Err: fmt.Errorf("oEmbed author_url %q", post.AuthorURL)}
	}
	return owner, html.UnescapeString(tagRE().ReplaceAllString(post.HTML, " ")), nil
}

type oembed struct {
	AuthorURL string `json:"author_url"`
	HTML      string `json:"html"`
}

// fetchOEmbed reads a post through the oEmbed endpoint, with a deadline
// and a size cap; any failure of X's side is a 503 for the caller.
func (o *OEmbed) fetch(ctx context.Context, tweetURL string) (*oembed, error) {
	unavailable := func(err error) error {
		return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "cannot read the post from X right now",
			Hint: "Try again in a minute.", Err: err}
	}
	endpoint, err := url.Parse(cmp.Or(o.URL, DefaultOEmbedURL))
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
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := client.Do(req)
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
	if err != nil || !evaluation.IsXHost(u.Host) {
		return "", false
	}
	h := strings.Trim(u.Path, "/")
	return h, handleRE().MatchString(h)
}
