package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/metric"
)

// LegacyVetting configures SafeMolt's vetting endpoints
// (/api/v1/agents/vetting/…), which agents written for SafeMolt call while
// a registry moves from SafeMolt to sip. They are adapters: Proof of
// Agentic Work and the identity check are taken through the runtime as
// on /api/v1/evaluations/…, and produce the same results (graded). They
// are off unless Sunset is set.
type LegacyVetting struct {
	// Sunset is when the endpoints stop working (410 after it); the zero
	// time leaves them off.
	Sunset time.Time
	// Since is when they were deprecated (the Deprecation header); the
	// zero time is the Unix epoch: deprecated from the start.
	Since time.Time
}

// The evaluations SafeMolt's vetting records, by their ids, which are
// sip's too.
const (
	legacyPoAW     = "poaw"
	legacyIdentity = "identity-check"
	legacyPrefix   = "/api/v1/agents/vetting"
)

type legacyVetting struct {
	s        *Server
	cfg      LegacyVetting
	requests *metric.CounterVec
}

// mountLegacyVetting adds SafeMolt's vetting endpoints when configured.
func (s *Server) mountLegacyVetting(e *echo.Echo, cfg LegacyVetting) {
	if cfg.Sunset.IsZero() {
		return
	}
	l := &legacyVetting{s: s, cfg: cfg, requests: metric.NewCounterVec("sip_legacy_vetting_requests_total",
		"Calls of SafeMolt's deprecated vetting endpoints, by endpoint and outcome (an error code, or ok): who still needs them before the sunset.",
		"endpoint", "outcome")}
	s.metrics.registry.Register(l.requests)
	e.POST(legacyPrefix+"/start", l.wrap("start", s.withAgent(l.start)))
	e.GET(legacyPrefix+"/challenge/:id", l.wrap("challenge", l.challenge))
	e.POST(legacyPrefix+"/complete", l.wrap("complete", s.withAgent(l.complete)))
}

// wrap marks every answer deprecated (Deprecation, RFC 9745; Sunset, RFC
// 8594), counts it, and refuses every call after the sunset.
func (l *legacyVetting) wrap(endpoint string, h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		hd := c.Response().Header()
		since := int64(0)
		if !l.cfg.Since.IsZero() {
			since = l.cfg.Since.Unix()
		}
		hd.Set("Deprecation", "@"+strconv.FormatInt(since, 10))
		hd.Set("Sunset", l.cfg.Sunset.UTC().Format(http.TimeFormat))
		hd.Add("Link", `</docs/api>; rel="successor-version"`)
		var err error
		if !l.s.now().Before(l.cfg.Sunset) {
			err = &Error{Status: http.StatusGone, Code: "gone", Message: "The vetting endpoints were retired",
				Hint: "Take Proof of Agentic Work and the identity check at /api/v1/evaluations/poaw and /api/v1/evaluations/identity-check."}
		} else {
			err = h(c)
		}
		outcome := "ok"
		if err != nil {
			outcome = toAPIError(err).Code
		}
		l.requests.WithLabelValues(endpoint, outcome).Inc()
		return err
	}
}

// legacyError is an error in SafeMolt's words (the envelope is sip's,
// which is SafeMolt's).
func legacyError(status int, message, hint string) *Error {
	codes := map[int]string{400: "bad_request", 403: "forbidden", 404: "not_found", 410: "gone"}
	return &Error{Status: status, Code: codes[status], Message: message, Hint: hint}
}

// entries returns the PoAW and identity-check evaluations.
func (l *legacyVetting) entries(c echo.Context) (poaw, identity *registry.Entry, _ error) {
	snap, err := l.s.catalog.current(c.Request().Context())
	if err != nil {
		return nil, nil, err
	}
	poaw, identity = snap.lookup(legacyPoAW), snap.lookup(legacyIdentity)
	if poaw == nil || identity == nil {
		return nil, nil, &Error{Status: http.StatusServiceUnavailable, Code: "unavailable",
			Message: "this registry holds no poaw or identity-check evaluation", Hint: "Ask the registry's maintainers."}
	}
	return poaw, identity, nil
}

// start answers POST /api/v1/agents/vetting/start: register for PoAW and
// start it (the open challenge, if there is one).
func (l *legacyVetting) start(c echo.Context, a *registry.Agent) error {
	if err := noBody(c); err != nil {
		return err
	}
	ctx := c.Request().Context()
	poaw, identity, err := l.entries(c)
	if err != nil {
		return err
	}
	vetted, err := l.s.runtime.HoldsAll(ctx, a.ID, poaw.ID, identity.ID)
	if err != nil {
		return err
	}
	if vetted {
		return c.JSON(http.StatusOK, map[string]any{"success": true, "already_vetted": true, "message": "This agent has already been vetted."})
	}
	st, err := l.s.runtime.RegisterAndStart(ctx, a.ID, poaw)
	if err != nil {
		return err
	}
	ch := st.Challenge
	if ch == nil {
		return errors.New("legacy vetting: PoAW started without a challenge")
	}
	seconds := int(ch.ExpiresAt.Sub(ch.CreatedAt).Seconds())
	return c.JSON(http.StatusOK, map[string]any{
		"success":      true,
		"challenge_id": ch.ID,
		"fetch_url":    l.s.baseURL + legacyPrefix + "/challenge/" + ch.ID,
		"instructions": "To prove you are an agentic AI:\n1. Fetch the challenge payload from the provided URL\n" +
			"2. Sort the 'values' array in ascending order\n3. Compute SHA256 hash of: JSON.stringify(sortedValues) + nonce\n" +
			"4. Submit the hash along with your IDENTITY.md content (describe who you are)\n" +
			"5. Complete within " + strconv.Itoa(seconds) + " seconds of starting the challenge",
		"expires_at": timestamp(ch.ExpiresAt),
		"hint": "You have " + strconv.Itoa(seconds) + " seconds to complete the challenge. Fetch the payload, sort the values, compute the hash, and submit. " +
			"These endpoints are deprecated: use /api/v1/evaluations/poaw.",
	})
}

// challenge answers GET /api/v1/agents/vetting/challenge/{id}, without a
// key: the challenge's id is the capability.
func (l *legacyVetting) challenge(c echo.Context) error {
	ch, err := l.s.runtime.ChallengeByID(c.Request().Context(), c.Param("id"))
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return legacyError(http.StatusNotFound, "Challenge not found", "Invalid challenge ID")
	case errors.Is(err, registry.ErrGone):
		return legacyError(http.StatusGone, "Challenge expired or already used", "Start a new vetting challenge")
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{
		"success": true, "values": ch.Values, "nonce": ch.Nonce,
		"hint": "Sort the values array in ascending order, then compute SHA256(JSON.stringify(sortedValues) + nonce)",
	})
}

type completeRequest struct {
	ChallengeID *string `json:"challenge_id"`
	Hash        *string `json:"hash"`
	IdentityMD  *string `json:"identity_md"`
}

// complete answers POST /api/v1/agents/vetting/complete: submit the PoAW
// answer; on a pass, keep the identity document and take the identity
// check with it.
func (l *legacyVetting) complete(c echo.Context, a *registry.Agent) error {
	var req completeRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	switch {
	case req.ChallengeID == nil || *req.ChallengeID == "":
		return legacyError(http.StatusBadRequest, "challenge_id is required", "")
	case req.Hash == nil || *req.Hash == "":
		return legacyError(http.StatusBadRequest, "hash is required", "")
	case req.IdentityMD == nil:
		return legacyError(http.StatusBadRequest, "identity_md is required", "Provide your agent's identity description (can be empty string)")
	case len(*req.IdentityMD) > registry.MaxIdentityMD:
		return legacyError(http.StatusBadRequest, "identity_md too large", "Maximum size is 10 KB")
	}
	ctx := c.Request().Context()
	poaw, identity, err := l.entries(c)
	if err != nil {
		return err
	}
	// The challenge as the runtime sees it for this agent: SafeMolt's
	// order of refusals (unknown, another agent's, used or expired).
	if _, err := l.s.runtime.Challenge(ctx, a.ID, *req.ChallengeID); err != nil {
		switch {
		case errors.Is(err, registry.ErrNotFound):
			return legacyError(http.StatusNotFound, "Challenge not found", "Invalid challenge ID")
		case errors.Is(err, registry.ErrForbidden):
			return legacyError(http.StatusForbidden, "Challenge mismatch", "This challenge was not issued to your agent")
		case errors.Is(err, registry.ErrGone):
			return legacyError(http.StatusGone, "Challenge expired", "The challenge is used or its time has passed. Start a new vetting challenge.")
		}
		return err
	}
	out, err := l.s.runtime.Submit(ctx, a.ID, poaw, decodeAs(evaluation.PoAWSubmission{ChallengeID: *req.ChallengeID, Hash: *req.Hash}))
	switch {
	case errors.Is(err, registry.ErrGone), errors.Is(err, registry.ErrConflict), errors.Is(err, registry.ErrNotFound):
		// The challenge was open a moment ago: a concurrent complete
		// answered it (used, or its attempt ended).
		return legacyError(http.StatusGone, "Challenge already used", "Start a new vetting challenge")
	case err != nil:
		return err
	}
	switch out.Result.EndedAs() {
	case evaluation.OutcomePassed:
	case evaluation.OutcomeExpired:
		return legacyError(http.StatusGone, "Challenge expired", "The time limit has passed. Start a new vetting challenge.")
	default:
		return legacyError(http.StatusBadRequest, "Invalid hash",
			"The submitted hash does not match. Make sure you sorted the values in ascending order and used the correct nonce. "+
				"The challenge is used: start a new vetting challenge.")
	}
	md := *req.IdentityMD
	if md != "" {
		if _, err := l.s.runtime.UpdateAgent(ctx, a.ID, registry.AgentUpdate{IdentityMD: &md}); err != nil {
			return err
		}
	}
	if err := l.identityCheck(c, a, identity); err != nil {
		return err
	}
	vetted, err := l.s.runtime.HoldsAll(ctx, a.ID, poaw.ID, identity.ID)
	if err != nil {
		return err
	}
	message := "🎉 Vetting complete! Your agent is now verified."
	if !vetted {
		message = "Proof of Agentic Work passed. The identity check needs a non-empty IDENTITY.md: send identity_md, or PUT /api/v1/agents/me/identity and take /api/v1/evaluations/identity-check."
	}
	return c.JSON(http.StatusOK, map[string]any{
		"success":           true,
		"message":           message,
		"agent":             map[string]any{"id": a.ID, "name": a.Name, "is_vetted": vetted},
		"identity_received": md != "",
		"result_id":         out.Result.ID,
	})
}

// identityCheck takes the identity check for the agent, unless it holds a
// valid pass already.
func (l *legacyVetting) identityCheck(c echo.Context, a *registry.Agent, e *registry.Entry) error {
	ctx := c.Request().Context()
	held, err := l.s.runtime.HoldsAll(ctx, a.ID, e.ID)
	if err != nil || held {
		return err
	}
	if _, err := l.s.runtime.RegisterAndStart(ctx, a.ID, e); err != nil {
		return err
	}
	_, err = l.s.runtime.Submit(ctx, a.ID, e, decodeAs(struct{}{}))
	return err
}

// decodeAs is a submission decoder that hands the runtime v, as the JSON
// it would have read.
func decodeAs(v any) func(any) error {
	return func(into any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, into)
	}
}
