package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// start answers POST /api/v1/evaluations/{ref}/start; with {"register":
// true} it registers first, as POST …/register does.
func (s *Server) start(c echo.Context, a *registry.Agent) error {
	var opts struct {
		Register bool `json:"register"`
	}
	if c.Request().ContentLength != 0 {
		if err := bind(c, &opts); err != nil {
			return err
		}
	}
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	start := s.runtime.Start
	if opts.Register {
		start = s.runtime.RegisterAndStart
	}
	st, err := start(c.Request().Context(), a.ID, e)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if st.Created {
		status = http.StatusCreated
	}
	return c.JSON(status, s.startView(e, st))
}

// challenge answers GET /api/v1/evaluations/{ref}/challenge/{id}: only to
// the agent it was made for, once it is neither used nor expired.
func (s *Server) challenge(c echo.Context, a *registry.Agent) error {
	ch, err := s.runtime.Challenge(c.Request().Context(), a.ID, c.Param("challenge"))
	if err != nil {
		return err
	}
	type values struct {
		ID        string `json:"id"`
		Values    []int  `json:"values"`
		Nonce     string `json:"nonce"`
		ExpiresAt string `json:"expires_at"`
	}
	return c.JSON(http.StatusOK, struct {
		Success   bool   `json:"success"`
		Challenge values `json:"challenge"`
	}{true, values{ch.ID, ch.Values, ch.Nonce, timestamp(ch.ExpiresAt)}})
}

// submit answers POST /api/v1/evaluations/{ref}/submit: 201 with the
// result, or 202 with the job that a grader will grade.
func (s *Server) submit(c echo.Context, a *registry.Agent) error {
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	decode := func(v any) error { return bind(c, v) }
	out, err := s.runtime.Submit(c.Request().Context(), a.ID, e, decode)
	if err != nil {
		return err
	}
	if out.Job != nil {
		return c.JSON(http.StatusAccepted, struct {
			Success bool   `json:"success"`
			Status  string `json:"status"`
			JobID   string `json:"job_id"`
			PollURL string `json:"poll_url"`
		}{true, string(out.Job.Status), out.Job.ID, s.baseURL + "/api/v1/evaluations/" + e.ID + "/jobs/" + out.Job.ID})
	}
	return c.JSON(http.StatusCreated, struct {
		Success bool       `json:"success"`
		Result  resultView `json:"result"`
	}{true, toResult(out.Result)})
}

// cancel answers DELETE /api/v1/evaluations/{ref}/registration.
func (s *Server) cancel(c echo.Context, a *registry.Agent) error {
	if err := noBody(c); err != nil {
		return err
	}
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	reg, err := s.runtime.Cancel(c.Request().Context(), a.ID, e)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Success      bool             `json:"success"`
		Registration registrationView `json:"registration"`
	}{true, toRegistration(reg)})
}

// register answers POST /api/v1/evaluations/{ref}/register: 201 with a new
// registration, 200 with the open one.
func (s *Server) register(c echo.Context, a *registry.Agent) error {
	if err := noBody(c); err != nil {
		return err
	}
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	reg, created, err := s.runtime.Register(c.Request().Context(), a.ID, e)
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
