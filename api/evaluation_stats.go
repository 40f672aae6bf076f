package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry/stats"
)

// statsLeader is an agent on a leaderboard, as the API shows it.
type statsLeader struct {
	Rank     int      `json:"rank"`
	AgentID  string   `json:"agent_id"`
	Name     string   `json:"name"`
	ResultID string   `json:"result_id"`
	Score    *float64 `json:"score,omitempty"`
	MaxScore *float64 `json:"max_score,omitempty"`
	At       string   `json:"at"`
}

// getEvaluationStats answers GET /api/v1/evaluations/{ref}/stats: the
// figures and leaderboards of /evaluations/{ref}/stats, computed once for
// both (the same cache, the same ?asserted= switch, the same agents
// named), so the page and the API agree.
func (s *Server) getEvaluationStats(c echo.Context) error {
	ef, err := s.figuresOf(c, "List the evaluations with GET /api/v1/evaluations.")
	if err != nil {
		return err
	}
	e, f, names := ef.e, ef.shown, ef.names
	board := func(st []stats.Standing, scored bool) []statsLeader {
		out := []statsLeader{}
		for _, l := range leaders(st, names) {
			x := statsLeader{Rank: l.Rank, AgentID: l.S.AgentID, Name: l.Name, ResultID: l.S.ResultID, At: timestamp(l.S.At)}
			if scored {
				x.Score, x.MaxScore = &l.S.Score, &l.S.MaxScore
			}
			out = append(out, x)
		}
		return out
	}
	var passRate *float64
	if f.PassRate.Known() {
		p := f.PassRate.Percent()
		passRate = &p
	}
	return c.JSON(http.StatusOK, struct {
		Success          bool          `json:"success"`
		EvaluationID     string        `json:"evaluation_id"`
		IncludesAsserted bool          `json:"includes_asserted"`
		Asserted         int           `json:"asserted"`
		Attempts         int           `json:"attempts"`
		Graded           int           `json:"graded"`
		Passes           int           `json:"passes"`
		PassRate         *float64      `json:"pass_rate"`
		Agents           int           `json:"agents"`
		AgentsPassed     int           `json:"agents_passed"`
		Best             []statsLeader `json:"best"`
		First            []statsLeader `json:"first"`
	}{true, e.ID, f.IncludesAsserted, f.Asserted, f.Attempts, f.Graded, f.Passes, passRate, f.Agents, f.AgentsPassed,
		board(f.Best, true), board(f.First, false)})
}
