package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

type claimPageData struct {
	pageBase
	Name, Code, Owner, TweetURL, DevOwner, Error string
	Claimed, Invalid                             bool
	OwnerOnX                                     bool // the owner is an X handle (shown as @handle)
	DevClaims                                    bool // a development registry: claims without X are offered
}

// claimPage serves the claim URL an agent gets at registration: the page
// where its human owner claims it (GET shows the code to post; POST takes
// the post's address). The secret token in the address is the proof of
// ownership, so the page needs no login; it is also what keeps a form on
// another site from posting here (it cannot know the address). On a
// development registry alone the page also offers a claim without X, as
// a development owner (dev_owner); anywhere else such a post is refused,
// as the API refuses it.
func (s *Server) claimPage(c echo.Context) error {
	ctx := c.Request().Context()
	token := c.Param("token")
	a, err := s.runtime.ClaimToken(ctx, token)
	if errors.Is(err, registry.ErrNotFound) {
		return s.page(c, http.StatusNotFound, claimPageData{Invalid: true})
	}
	if err != nil {
		return err
	}
	data := claimPageData{Name: a.Name, Code: a.VerificationCode, Owner: a.Owner, Claimed: a.Claimed(), DevClaims: s.runtime.DevelopmentClaims()}
	if c.Request().Method == http.MethodPost && !a.Claimed() {
		data.TweetURL, data.DevOwner = c.FormValue("tweet_url"), c.FormValue("dev_owner")
		claim, by := s.runtime.ClaimAgent, data.TweetURL
		if data.DevOwner != "" && data.TweetURL == "" {
			claim, by = s.runtime.DevelopmentClaim, data.DevOwner
		}
		claimed, err := claim(ctx, token, by)
		if err != nil {
			var ae *Error
			var rf *evaluation.Refusal
			if !errors.As(err, &ae) && !errors.As(err, &rf) {
				return err
			}
			if ae = toAPIError(err); ae.Status >= 500 && ae.Status != http.StatusServiceUnavailable {
				return err
			}
			data.Error = ae.Message + ". " + ae.Hint
			return s.page(c, ae.Status, data)
		}
		data.Claimed, data.Owner = true, claimed.Owner
	}
	data.OwnerOnX = evaluation.OwnerOnX(data.Owner)
	return s.page(c, http.StatusOK, data)
}

// page renders the claim page in the site's design, with the site's
// headers (no scripts, no framing, no sniffing) and two more: the address
// holds the claim token, so it is never cached nor sent as a referrer.
func (s *Server) page(c echo.Context, status int, data claimPageData) error {
	data.pageBase = pageBase{Title: "Claim " + data.Name, Version: s.version}
	if data.Invalid {
		data.Title = "Claim"
	}
	body, err := executePage("claim", data)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	return c.HTMLBlob(status, body)
}
