package api

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// healthz says the process is alive; it touches nothing else.
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, health{Success: true, Status: "ok"})
}

// readyz says whether the server can serve: the database answers.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.catalog.registry.Reachable(ctx); err != nil {
		s.log.Warn("not ready", "error", err)
		c.Response().Header().Set("Retry-After", "5")
		return c.JSON(http.StatusServiceUnavailable, health{Status: "unavailable", Checks: map[string]string{"database": "unreachable"}})
	}
	checks := map[string]string{"database": "ok"}
	if s.readyDetails != nil {
		for k, v := range s.readyDetails(ctx) {
			checks[k] = v
		}
	}
	if s.judgeStatus != nil {
		// A detail, not a condition: while the judge is down, jobs wait
		// and everything else is served.
		checks["judge"] = s.judgeStatus()
	}
	return c.JSON(http.StatusOK, health{Success: true, Status: "ready", Checks: checks})
}

// SetJudgeStatus makes /readyz report the judge's health as told by f
// ("ok", "not configured", or what is wrong). Call it before serving.
func (s *Server) SetJudgeStatus(f func() string) { s.judgeStatus = f }

type health struct {
	Success bool              `json:"success"`
	Status  string            `json:"status"`
	Checks  map[string]string `json:"checks,omitempty"`
}
