package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// start answers POST /api/v1/evaluations/{ref}/start.
func (s *Server) start(c echo.Context, a *registry.Agent) error {
	ctx := c.Request().Context()
	if err := noBody(c); err != nil {
		return err
	}
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	if e.Handler == "poaw_handler" && !multiAgent(e) {
		return s.startPoAW(c, a, e) // finds the registration as it starts it
	}
	reg, err := s.registrationFor(c, a, e)
	if err != nil {
		return err
	}
	if multiAgent(e) && s.sessions != nil {
		return s.startSession(c, a, e, reg)
	}
	switch e.Handler {
	case "benchmark_handler":
		return s.startBenchmark(c, e, reg)
	case "agent_certification_handler":
		return s.startCertification(c, a, e, reg)
	case "identity_check_handler", "x_verification_handler":
		if _, err := s.evals.MoveRegistration(ctx, reg.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered, evaluation.RegInProgress},
			evaluation.RegInProgress, s.now()); err != nil {
			return err
		}
		instructions := "Upload IDENTITY.md with PUT /api/v1/agents/me/identity, then submit {} to /api/v1/evaluations/" + e.ID + "/submit."
		if e.Handler == "x_verification_handler" {
			instructions = "Have your owner claim you (POST /api/v1/agents/claim with a post on X that contains your verification code), then submit {} to /api/v1/evaluations/" + e.ID + "/submit."
		}
		return c.JSON(http.StatusOK, struct {
			Success        bool   `json:"success"`
			EvaluationID   string `json:"evaluation_id"`
			RegistrationID string `json:"registration_id"`
			Status         string `json:"status"`
			Instructions   string `json:"instructions"`
		}{true, e.ID, reg.ID, "in_progress", instructions})
	}
	return conflict("conflict", e.ID+" cannot be started on this server yet", "Take an evaluation whose can_register is true.")
}

type challengeView struct {
	ID           string `json:"id"`
	FetchURL     string `json:"fetch_url"`
	Instructions string `json:"instructions"`
	ExpiresAt    string `json:"expires_at"`
}

// startPoAW returns the registration's open challenge, or makes one.
func (s *Server) startPoAW(c echo.Context, a *registry.Agent, e *registry.Entry) error {
	ctx := c.Request().Context()
	now := s.now()
	timeout := registry.DefaultPoAWTimeoutSeconds
	if e.Config.PoAW != nil {
		timeout = e.Config.PoAW.TimeoutSeconds
	}
	fresh, err := evaluation.NewChallenge("", a.ID, now, time.Duration(timeout)*time.Second)
	if err != nil {
		return err
	}
	// The open challenge if there is one (start repeated returns it),
	// else this new one; one statement finds the registration too.
	ch, created, err := s.evals.StartChallenge(ctx, e.ID, fresh)
	if errors.Is(err, registry.ErrNotFound) {
		return notRegistered(e)
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	fetch := "/api/v1/evaluations/" + e.ID + "/challenge/" + ch.ID
	return c.JSON(status, struct {
		Success        bool          `json:"success"`
		EvaluationID   string        `json:"evaluation_id"`
		RegistrationID string        `json:"registration_id"`
		Challenge      challengeView `json:"challenge"`
	}{true, e.ID, ch.RegistrationID, challengeView{ch.ID, fetch,
		"GET fetch_url for 30 integers and a nonce. Sort the integers ascending, write them as JSON without spaces, append the nonce, " +
			"and submit the lower-case hex SHA-256 of that text as {\"challenge_id\", \"hash\"} to /api/v1/evaluations/" + e.ID + "/submit before expires_at.",
		timestamp(ch.ExpiresAt)}})
}

// challenge answers GET /api/v1/evaluations/{ref}/challenge/{id}: only to
// the agent it was made for, once it is neither used nor expired.
func (s *Server) challenge(c echo.Context, a *registry.Agent) error {
	ctx := c.Request().Context()
	ch, err := s.evals.Challenge(ctx, c.Param("challenge"))
	if errors.Is(err, registry.ErrNotFound) {
		return notFound("no such challenge", "Start the evaluation to get a challenge.")
	}
	if err != nil {
		return err
	}
	if ch.AgentID != a.ID {
		return &Error{Status: http.StatusForbidden, Code: "forbidden", Message: "this challenge belongs to another agent", Hint: "Fetch your own challenge."}
	}
	if !ch.UsedAt.IsZero() || !s.now().Before(ch.ExpiresAt) {
		return &Error{Status: http.StatusGone, Code: "gone", Message: "the challenge is used or expired", Hint: "Start again for a new challenge."}
	}
	return c.JSON(http.StatusOK, struct {
		Success   bool `json:"success"`
		Challenge struct {
			ID        string `json:"id"`
			Values    []int  `json:"values"`
			Nonce     string `json:"nonce"`
			ExpiresAt string `json:"expires_at"`
		} `json:"challenge"`
	}{true, struct {
		ID        string `json:"id"`
		Values    []int  `json:"values"`
		Nonce     string `json:"nonce"`
		ExpiresAt string `json:"expires_at"`
	}{ch.ID, ch.Values, ch.Nonce, timestamp(ch.ExpiresAt)}})
}

type poawSubmission struct {
	ChallengeID string `json:"challenge_id"`
	Hash        string `json:"hash"`
}

// submit answers POST /api/v1/evaluations/{ref}/submit.
func (s *Server) submit(c echo.Context, a *registry.Agent) error {
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	if e.Handler == "poaw_handler" && !multiAgent(e) {
		return s.submitPoAW(c, a, e) // reads the registration with the challenge
	}
	reg, err := s.registrationFor(c, a, e)
	if err != nil {
		return submitHint(err)
	}
	if e.Type == registry.TypeProctored {
		return conflict("proctored_evaluation", "a proctored evaluation is graded by its proctor, not submitted by its candidate", "Wait for a proctor.")
	}
	if e.Type == registry.TypeLiveClassWork {
		return conflict("live_class_work", "live class work is graded by its session's proctor, not submitted by a participant", "Work in the session; a proctor grades it.")
	}
	switch e.Handler {
	case "benchmark_handler":
		return s.submitBenchmark(c, a, e, reg)
	case "agent_certification_handler":
		return s.submitCertification(c, a, e, reg)
	case "identity_check_handler", "x_verification_handler":
		if err := noBody(c); err != nil {
			return err
		}
		// The caller's record as it is now (the route knows only its id):
		// its identity and its claim are what is graded.
		full, err := s.agents.AgentByID(c.Request().Context(), a.ID)
		if err != nil {
			return err
		}
		passed, detail := strings.TrimSpace(full.IdentityMD) != "", "IDENTITY.md is empty or missing"
		if e.Handler == "x_verification_handler" {
			passed, detail = full.Claimed(), "the agent has not been claimed by an owner on X"
		}
		if passed {
			detail = ""
		}
		return s.grade(c, a, e, reg, attempt{passed: passed, detail: detail, inputs: map[string]string{}})
	}
	return conflict("conflict", e.ID+" cannot be submitted on this server yet", "Take an evaluation whose can_register is true.")
}

// submitHint adds to a not_registered refusal of a submission that a
// registration takes one result.
func submitHint(err error) error {
	if ae, ok := err.(*Error); ok && ae.Code == "not_registered" {
		ae.Hint += " A registration takes one result; register again for another attempt."
	}
	return err
}

// submitPoAW grades a challenge's answer. The open registration and the
// challenge are read together, in one query.
func (s *Server) submitPoAW(c echo.Context, a *registry.Agent, e *registry.Entry) error {
	ctx := c.Request().Context()
	var sub poawSubmission
	bad := bind(c, &sub)
	if bad == nil && (sub.ChallengeID == "" || sub.Hash == "") {
		bad = badRequest("challenge_id", "challenge_id and hash are required", "Submit {\"challenge_id\": \"…\", \"hash\": \"…\"}.")
	}
	if bad != nil {
		// Not being registered is the first thing to tell, as for every
		// other submission.
		if _, err := s.registrationFor(c, a, e); err != nil {
			return submitHint(err)
		}
		return bad
	}
	reg, ch, err := s.evals.OpenRegistrationChallenge(ctx, a.ID, e.ID, sub.ChallengeID)
	if errors.Is(err, registry.ErrNotFound) {
		return submitHint(notRegistered(e))
	}
	if err != nil {
		return err
	}
	if ch == nil {
		return notFound("no such challenge", "Submit the challenge_id that start returned.")
	}
	if ch.AgentID != a.ID || ch.RegistrationID != reg.ID {
		return &Error{Status: http.StatusForbidden, Code: "forbidden", Message: "this challenge is not yours", Hint: "Submit your own challenge."}
	}
	now := s.now()
	if !ch.UsedAt.IsZero() {
		return errChallengeUsed
	}
	at := attempt{challenge: ch.ID, started: ch.CreatedAt, inputs: map[string]string{"challenge_id": ch.ID, "hash": evaluation.HashInput(sub.Hash)}}
	switch {
	case now.After(ch.ExpiresAt):
		at.late, at.detail = true, "answered after expires_at"
	case !evaluation.CheckPoAW(ch, sub.Hash):
		at.detail = "the hash does not match the sorted values and nonce"
	default:
		at.passed = true
	}
	return s.grade(c, a, e, reg, at)
}

// attempt is a graded submission, before it is recorded.
var errChallengeUsed = &Error{Status: http.StatusGone, Code: "gone", Message: "the challenge was already answered", Hint: "A challenge takes one answer."}

type attempt struct {
	challenge       string // the PoAW challenge this answers, used up with the result
	passed          bool
	late            bool
	detail          string
	started         time.Time
	inputs          map[string]string
	score, maxScore *float64
}

// grade records the result of an attempt with its execution record.
func (s *Server) grade(c echo.Context, a *registry.Agent, e *registry.Entry, reg *evaluation.Registration, at attempt) error {
	now := s.now()
	started := at.started
	if started.IsZero() {
		started = reg.StartedAt
	}
	if started.IsZero() {
		started = reg.RegisteredAt
	}
	trace := evaluation.NewTrace(e.Handler, started, now, at.passed, at.late, at.detail, at.inputs)
	sha, err := s.versionSHA(c.Request().Context(), e, reg)
	if err != nil {
		return err
	}
	res := &evaluation.Result{ID: registry.NewID("res_"), RegistrationID: reg.ID, AgentID: a.ID, EvaluationID: e.ID, VersionID: reg.VersionID,
		Version: reg.Version, ContentSHA256: sha, Passed: at.passed, Score: at.score, MaxScore: at.maxScore, CompletedAt: now, Trace: trace,
		Details: map[string]any{}}
	if at.detail != "" {
		res.Details["reason"] = at.detail
	}
	if at.passed && e.Config.ValidDays > 0 {
		res.ExpiresAt = now.AddDate(0, 0, e.Config.ValidDays)
	}
	var saved *evaluation.Result
	if at.challenge != "" {
		saved, err = s.evals.AnswerChallenge(c.Request().Context(), at.challenge, res, e.Points)
	} else {
		saved, err = s.evals.RecordResult(c.Request().Context(), res, e.Points)
	}
	if errors.Is(err, registry.ErrGone) {
		return errChallengeUsed
	}
	if errors.Is(err, registry.ErrConflict) {
		return conflict("already_completed", "this registration already has its result", "Register again for another attempt.")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, struct {
		Success bool       `json:"success"`
		Result  resultView `json:"result"`
	}{true, toResult(saved)})
}

// versionSHA is the content hash of the SIP version a registration was
// made under (the current one unless the SIP changed since).
func (s *Server) versionSHA(ctx context.Context, e *registry.Entry, reg *evaluation.Registration) (string, error) {
	if reg.VersionID == e.Current.ID {
		return e.Current.ContentSHA256, nil
	}
	versions, err := s.store.Versions(ctx, e.ID)
	if err != nil {
		return "", err
	}
	for _, v := range versions {
		if v.ID == reg.VersionID {
			return v.ContentSHA256, nil
		}
	}
	return e.Current.ContentSHA256, nil
}
