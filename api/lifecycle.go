package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// evaluationStore is what the API needs of registrations and results.
type evaluationStore interface {
	Register(ctx context.Context, r *evaluation.Registration) (*evaluation.Registration, bool, error)
	OpenRegistration(ctx context.Context, agentID, evaluationID string) (*evaluation.Registration, error)
	OpenRegistrations(ctx context.Context, agentID string) ([]*evaluation.Registration, error)
	MoveRegistration(ctx context.Context, id string, from []evaluation.RegistrationStatus, to evaluation.RegistrationStatus, at time.Time) (*evaluation.Registration, error)
	Challenge(ctx context.Context, id string) (*evaluation.Challenge, error)
	OpenRegistrationChallenge(ctx context.Context, agentID, evaluationID, challengeID string) (*evaluation.Registration, *evaluation.Challenge, error)
	StartChallenge(ctx context.Context, evaluationID string, c *evaluation.Challenge) (*evaluation.Challenge, bool, error)
	AnswerChallenge(ctx context.Context, challengeID string, r *evaluation.Result, points float64) (*evaluation.Result, error)
	RecordResult(ctx context.Context, r *evaluation.Result, points float64) (*evaluation.Result, error)
	Result(ctx context.Context, id string) (*evaluation.Result, error)
	Results(ctx context.Context, f evaluation.ResultFilter) ([]*evaluation.Result, string, error)
	Passes(ctx context.Context, agentID string, now time.Time) ([]*evaluation.Result, error)
	AgentPoints(ctx context.Context, agentID string) (float64, error)
	PassCounts(ctx context.Context) (map[string]int, error)
	Registration(ctx context.Context, id string) (*evaluation.Registration, error)
}

// canRun reports whether this server runs e's handler. Evaluations run by
// other handlers can be read but not taken yet.
func (s *Server) canRun(e *registry.Entry) bool { return s.runnable[e.Handler] }

func conflict(code, msg, hint string) *Error {
	return &Error{Status: http.StatusConflict, Code: code, Message: msg, Hint: hint}
}

// validPasses maps the evaluations an agent holds a still-valid pass of to
// that pass (the newest).
func (s *Server) validPasses(ctx context.Context, agentID string) (map[string]*evaluation.Result, error) {
	passes, err := s.evals.Passes(ctx, agentID, s.now())
	if err != nil {
		return nil, err
	}
	valid := map[string]*evaluation.Result{}
	for _, p := range passes {
		valid[p.EvaluationID] = p
	}
	return valid, nil
}

type registrationView struct {
	ID                string `json:"id"`
	EvaluationID      string `json:"evaluation_id"`
	EvaluationVersion string `json:"evaluation_version"`
	Status            string `json:"status"`
	RegisteredAt      string `json:"registered_at"`
}

func toRegistration(r *evaluation.Registration) registrationView {
	return registrationView{r.ID, r.EvaluationID, r.Version, string(r.Status), timestamp(r.RegisteredAt)}
}

// register answers POST /api/v1/evaluations/{ref}/register: 201 with a new
// registration, 200 with the open one.
func (s *Server) register(c echo.Context, a *registry.Agent) error {
	ctx := c.Request().Context()
	if err := noBody(c); err != nil {
		return err
	}
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	if e.Status != registry.StatusActive || e.Removed {
		return conflict("evaluation_not_active", e.ID+" is "+string(e.Status)+"; only active evaluations take registrations", "Choose an active evaluation.")
	}
	if !s.canRun(e) {
		return conflict("conflict", e.ID+" ("+string(e.Type)+") cannot be taken on this server yet: it does not run "+e.Handler,
			"Take an evaluation whose can_register is true.")
	}
	var missing []string
	if len(e.Prerequisites) > 0 {
		valid, err := s.validPasses(ctx, a.ID)
		if err != nil {
			return err
		}
		for _, p := range e.Prerequisites {
			if valid[p] == nil {
				missing = append(missing, p)
			}
		}
	}
	if len(missing) > 0 {
		return &Error{Status: http.StatusForbidden, Code: "prerequisites_not_met", Missing: missing,
			Message: "prerequisites not met: pass " + joinQuoted(missing) + " first", Hint: "Pass every prerequisite (a pass that has not expired), then register."}
	}
	reg, created, err := s.evals.Register(ctx, &evaluation.Registration{ID: registry.NewID("reg_"), AgentID: a.ID, EvaluationID: e.ID,
		VersionID: e.Current.ID, RegisteredAt: s.now()})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, struct {
		Success      bool             `json:"success"`
		Registration registrationView `json:"registration"`
	}{true, toRegistration(reg)})
}

// cancel answers DELETE /api/v1/evaluations/{ref}/registration.
func (s *Server) cancel(c echo.Context, a *registry.Agent) error {
	ctx := c.Request().Context()
	if err := noBody(c); err != nil {
		return err
	}
	e, reg, err := s.openRegistration(c, a)
	if err != nil {
		return err
	}
	if multiAgent(e) && s.sessions != nil {
		// A seat in a forming session is given back; an attempt whose
		// session has started is no longer the candidate's to cancel.
		err := s.sessions.LeaveForming(ctx, reg.ID)
		if err == nil && e.Type == registry.TypeProctored {
			if _, serr := s.sessions.SessionByRegistration(ctx, reg.ID); serr == nil {
				err = registry.ErrConflict
			} else if !errors.Is(serr, registry.ErrNotFound) {
				return serr
			}
		}
		if errors.Is(err, registry.ErrConflict) {
			return conflict("session_started", "the session of this attempt has started; it ends with the proctor's grade", "Wait for the grade.")
		}
		if err != nil {
			return err
		}
	}
	moved, err := s.evals.MoveRegistration(ctx, reg.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered, evaluation.RegInProgress}, evaluation.RegCancelled, s.now())
	if errors.Is(err, registry.ErrConflict) {
		return conflict("conflict", "the attempt at "+e.ID+" is "+string(reg.Status)+" and can no longer be cancelled", "Wait for its result.")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Success      bool             `json:"success"`
		Registration registrationView `json:"registration"`
	}{true, toRegistration(moved)})
}

// openRegistration finds the evaluation of the path and the agent's open
// registration for it.
func (s *Server) openRegistration(c echo.Context, a *registry.Agent) (*registry.Entry, *evaluation.Registration, error) {
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return nil, nil, err
	}
	reg, err := s.registrationFor(c, a, e)
	return e, reg, err
}

// registrationFor finds the agent's open registration for e.
func (s *Server) registrationFor(c echo.Context, a *registry.Agent, e *registry.Entry) (*evaluation.Registration, error) {
	reg, err := s.evals.OpenRegistration(c.Request().Context(), a.ID, e.ID)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, notRegistered(e)
	}
	return reg, err
}

func notRegistered(e *registry.Entry) *Error {
	return conflict("not_registered", "no open registration for "+e.ID, "Register first: POST /api/v1/evaluations/"+e.ID+"/register.")
}

func joinQuoted(ids []string) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += id
	}
	return out
}

// registrationStatus is what the listing tells an agent about one
// evaluation.
func registrationStatus(e *registry.Entry, open map[string]*evaluation.Registration, valid map[string]*evaluation.Result) (string, bool) {
	if r := open[e.ID]; r != nil {
		return string(r.Status), false
	}
	if valid[e.ID] != nil {
		return "completed", true
	}
	if slices.ContainsFunc(e.Prerequisites, func(p string) bool { return valid[p] == nil }) {
		return "prerequisites_not_met", false
	}
	return "available", true
}
