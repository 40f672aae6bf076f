package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

type resultView struct {
	ID                string   `json:"id"`
	AgentID           string   `json:"agent_id"`
	EvaluationID      string   `json:"evaluation_id"`
	RegistrationID    string   `json:"registration_id"`
	Passed            bool     `json:"passed"`
	Outcome           string   `json:"outcome"`
	Score             *float64 `json:"score"`
	MaxScore          *float64 `json:"max_score"`
	PointsEarned      float64  `json:"points_earned"`
	EvaluationVersion string   `json:"evaluation_version"`
	ContentSHA256     string   `json:"content_sha256"`
	CompletedAt       string   `json:"completed_at"`
	ExpiresAt         *string  `json:"expires_at"`
	RevokedAt         *string  `json:"revoked_at,omitempty"`
	RevokedReason     string   `json:"revoked_reason,omitempty"`
	Provenance        string   `json:"provenance"`
}

func toResult(r *evaluation.Result) resultView {
	v := resultView{ID: r.ID, AgentID: r.AgentID, EvaluationID: r.EvaluationID, RegistrationID: r.RegistrationID, Passed: r.Passed,
		Outcome: string(r.EndedAs()), Score: r.Score, MaxScore: r.MaxScore, PointsEarned: r.PointsEarned, EvaluationVersion: r.Version,
		ContentSHA256: r.ContentSHA256, CompletedAt: timestamp(r.CompletedAt), Provenance: string(r.Of())}
	if !r.ExpiresAt.IsZero() {
		t := timestamp(r.ExpiresAt)
		v.ExpiresAt = &t
	}
	if !r.RevokedAt.IsZero() {
		t := timestamp(r.RevokedAt)
		v.RevokedAt, v.RevokedReason = &t, r.RevokedReason
	}
	return v
}

// viewer is the agent making a request that does not need one: nil
// without an Authorization header; a bad key is still refused.
func (s *Server) viewer(c echo.Context) (*registry.Agent, error) {
	if header(c.Request().Header, "Authorization") == "" || !s.serves.Agents {
		return nil, nil
	}
	return s.authenticate(c)
}

// listResults answers GET /api/v1/evaluations/{ref}/results.
func (s *Server) listResults(c echo.Context) error {
	ctx := c.Request().Context()
	v, err := s.viewer(c)
	if err != nil {
		return err
	}
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	q := c.QueryParams()
	f := evaluation.ResultFilter{EvaluationID: e.ID, AgentID: q.Get("agent_id"), Version: q.Get("version"), Cursor: q.Get("cursor")}
	if v != nil {
		f.Viewer = v.ID
	}
	if p := q.Get("provenance"); p != "" {
		if f.Provenance, err = evaluation.ParseProvenance(p); err != nil {
			return badRequest("provenance", "provenance must be graded, imported, backfilled or provisioned", "Leave it out for every result.")
		}
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > registry.MaxPageSize {
			return badRequest("limit", "limit must be a number from 1 to 200", "Use limit=50, or leave it out.")
		}
		f.Limit = n
	}
	results, next, err := s.runtime.Results(ctx, f)
	if errors.Is(err, registry.ErrInvalid) {
		return badRequest("cursor", "cursor is not one this API gave", "Pass next_cursor from the previous page unchanged.")
	}
	if err != nil {
		return err
	}
	items := make([]resultView, 0, len(results))
	for _, r := range results {
		items = append(items, toResult(r))
	}
	var nextCursor *string
	if next != "" {
		nextCursor = &next
	}
	return c.JSON(http.StatusOK, struct {
		Success    bool         `json:"success"`
		Results    []resultView `json:"results"`
		NextCursor *string      `json:"next_cursor"`
	}{true, items, nextCursor})
}

// visibleResult returns a result the caller may see: results of agents who
// keep them private exist only for themselves.
func (s *Server) visibleResult(c echo.Context) (*evaluation.Result, error) {
	ctx := c.Request().Context()
	v, err := s.viewer(c)
	if err != nil {
		return nil, err
	}
	r, _, err := s.runtime.VisibleResult(ctx, viewerID(v), c.Param("id"))
	if err != nil {
		return nil, err
	}
	return r, nil
}

// getResult answers GET /api/v1/results/{id}.
func (s *Server) getResult(c echo.Context) error {
	r, err := s.visibleResult(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Success bool           `json:"success"`
		Result  resultView     `json:"result"`
		Details map[string]any `json:"details"`
	}{true, toResult(r), r.Details})
}

// getTrace answers GET /api/v1/results/{id}/trace: the execution record.
func (s *Server) getTrace(c echo.Context) error {
	r, err := s.visibleResult(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		Success  bool             `json:"success"`
		ResultID string           `json:"result_id"`
		Trace    evaluation.Trace `json:"trace"`
	}{true, r.ID, r.Trace})
}
