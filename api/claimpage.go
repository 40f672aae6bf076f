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
	Name, Code, Owner, TweetURL, Error string
	Claimed, Invalid                   bool
}

// claimPage serves the claim URL an agent gets at registration: the page
// where its human owner claims it (GET shows the code to post; POST takes
// the post's address). The secret token in the address is the proof of
// ownership, so the page needs no login.
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
	data := claimPageData{Name: a.Name, Code: a.VerificationCode, Owner: a.Owner, Claimed: a.Claimed()}
	if c.Request().Method == http.MethodPost && !a.Claimed() {
		data.TweetURL = c.FormValue("tweet_url")
		claimed, err := s.runtime.ClaimAgent(ctx, token, data.TweetURL)
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
