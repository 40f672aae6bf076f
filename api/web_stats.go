package api

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/stats"
)

// leaderboardSize is how many agents a page's leaderboard shows.
const leaderboardSize = 10

// leader is a row of a leaderboard, with the agent's public name.
type leader struct {
	Rank  int
	Name  string
	S     stats.Standing
	Share float64 // Best: the score as a percentage of the maximum
}

type binRow struct {
	Label string
	N     int
}

type evaluationStatsPage struct {
	pageBase
	E *registry.Entry
	F *stats.Evaluation
	// Charts: the score distribution, attempts over time, and pass rate
	// by version.
	ScoreChart, TimeChart, VersionChart barChart
	Bins                                []binRow
	Best, First                         []leader
	PeriodLabel                         string // "Week of" or "Month"
}

// evaluationFigures are an evaluation's statistics as anyone may see
// them, shared by its page and GET /api/v1/evaluations/{ref}/stats so the
// two agree: the one cache, the ?asserted= switch, nothing drawn from
// scores where the evaluation's scores are not public, and the agents
// that may be named on its boards.
type evaluationFigures struct {
	snap     *snapshot
	e        *registry.Entry
	f        *stats.Evaluation // as computed: the cache's identity
	shown    *stats.Evaluation // f, or f without what scores would tell
	scores   bool
	asserted stats.Asserted
	names    map[string]string
}

// figuresOf reads the figures of the evaluation named by the ref path
// parameter; where is the hint of a ref that names no evaluation.
func (s *Server) figuresOf(c echo.Context, where string) (*evaluationFigures, error) {
	ctx := c.Request().Context()
	snap, err := s.catalog.current(ctx)
	if err != nil {
		return nil, err
	}
	e := snap.lookup(c.Param("ref"))
	if e == nil {
		return nil, notFound("no evaluation "+quote(c.Param("ref")), where)
	}
	if !e.Type.IsEvaluation() {
		return nil, notFound(fmt.Sprintf("SIP-%d is a process SIP: nobody takes it, so it has no statistics", e.Number), where)
	}
	asserted, err := assertedParam(c)
	if err != nil {
		return nil, err
	}
	f, err := s.stats.Evaluation(ctx, e.ID, asserted)
	if err != nil {
		return nil, err
	}
	out := &evaluationFigures{snap: snap, e: e, f: f, shown: f, scores: registry.ScoresPublic(&e.SIP), asserted: asserted}
	if !out.scores {
		out.shown = f.WithoutScores()
	}
	// Who may be named is asked now, for both boards at once.
	if out.names, err = s.publicNames(ctx, out.shown.Best, out.shown.First); err != nil {
		return nil, err
	}
	return out, nil
}

// evaluationStats serves /evaluations/{sip}/stats: how an evaluation is
// doing, and its leaderboards.
func (s *Server) evaluationStats(c echo.Context) error {
	ef, err := s.figuresOf(c, "See /evaluations for the evaluations.")
	if err != nil {
		return err
	}
	// The page is rendered again only when the figures or the names
	// shown change.
	fp := fmt.Sprintf("%p;%t;%s", ef.f, ef.scores, namesFingerprint(ef.names))
	key := "/evaluations/" + ef.e.ID + "/stats"
	if ef.asserted == stats.IncludeAsserted {
		key += "?asserted=include"
	}
	return s.cachedPage(c, ef.snap, key, fp, func() (string, any, error) {
		return "evaluation_stats", s.evaluationStatsPage(ef.e, ef.shown, ef.names), nil
	})
}

// assertedParam reads ?asserted=, the switch of statistics and
// leaderboards for results another registry asserted without evidence:
// "include" counts them, "exclude" (the default) leaves them out.
func assertedParam(c echo.Context) (stats.Asserted, error) {
	switch c.QueryParam("asserted") {
	case "", "exclude":
		return stats.LeaveOutAsserted, nil
	case "include":
		return stats.IncludeAsserted, nil
	}
	return false, badRequest("asserted", "asserted is include or exclude", "Leave it out to leave asserted (backfilled, provisioned) results out.")
}

func (s *Server) evaluationStatsPage(e *registry.Entry, f *stats.Evaluation, names map[string]string) evaluationStatsPage {
	page := evaluationStatsPage{pageBase: pageBase{Title: fmt.Sprintf("Statistics · SIP-%d: %s", e.Number, e.Name), Nav: "evaluations", Version: s.version},
		E: e, F: f, PeriodLabel: "Week of"}
	if f.Monthly {
		page.PeriodLabel = "Month"
	}
	page.ScoreChart = barChart{ID: "scores", Title: "Score distribution",
		Desc: fmt.Sprintf("%d scored attempts by score, as a share of the maximum, in tenths.", f.Scored), Series: []chartSeries{{Name: "Attempts"}}}
	for i, n := range f.Scores {
		label := fmt.Sprintf("%d–%d%%", i*10, i*10+9)
		if i == stats.Bins-1 {
			label = "90–100%"
		}
		page.ScoreChart.Labels = append(page.ScoreChart.Labels, label)
		page.ScoreChart.Series[0].Values = append(page.ScoreChart.Series[0].Values, float64(n))
		page.Bins = append(page.Bins, binRow{label, n})
	}
	page.TimeChart = barChart{ID: "time", Title: "Attempts and passes over time",
		Desc:   fmt.Sprintf("Attempts (wide bars) and passes (narrow bars) per %s.", map[bool]string{true: "month", false: "week"}[f.Monthly]),
		Series: []chartSeries{{Name: "Attempts"}, {Name: "Passes"}}}
	for _, p := range f.Periods {
		page.TimeChart.Labels = append(page.TimeChart.Labels, periodLabel(p.Start, f.Monthly))
		page.TimeChart.Series[0].Values = append(page.TimeChart.Series[0].Values, float64(p.Attempts))
		page.TimeChart.Series[1].Values = append(page.TimeChart.Series[1].Values, float64(p.Passes))
	}
	page.VersionChart = barChart{ID: "versions", Title: "Pass rate by version", Percent: true,
		Desc: "The share of graded attempts that passed, under each version of the SIP.", Series: []chartSeries{{Name: "Pass rate"}}}
	for _, v := range f.Versions {
		page.VersionChart.Labels = append(page.VersionChart.Labels, v.Version)
		page.VersionChart.Series[0].Values = append(page.VersionChart.Series[0].Values, v.PassRate.Percent())
	}
	page.Best, page.First = leaders(f.Best, names), leaders(f.First, names)
	return page
}

// publicNames maps to names the agents of the standings whose results
// are public: asked of the store at every view, not cached, so an agent
// that hides its results leaves the boards at once.
func (s *Server) publicNames(ctx context.Context, boards ...[]stats.Standing) (map[string]string, error) {
	var ids []string
	for _, b := range boards {
		for _, x := range b {
			ids = append(ids, x.AgentID)
		}
	}
	return s.runtime.PublicAgentNames(ctx, ids)
}

// namesFingerprint identifies a set of names.
func namesFingerprint(names map[string]string) string {
	pairs := make([]string, 0, len(names))
	for id, n := range names {
		pairs = append(pairs, id+"="+n)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ";")
}

// leaders keeps the first leaderboardSize standings of agents named.
func leaders(st []stats.Standing, names map[string]string) []leader {
	var out []leader
	for _, x := range st {
		name, ok := names[x.AgentID]
		if !ok {
			continue
		}
		l := leader{Rank: len(out) + 1, Name: name, S: x}
		if x.MaxScore > 0 {
			l.Share = 100 * x.Score / x.MaxScore
		}
		if out = append(out, l); len(out) == leaderboardSize {
			break
		}
	}
	return out
}

func periodLabel(t time.Time, monthly bool) string {
	if monthly {
		return t.Format("Jan 2006")
	}
	return t.Format("2 Jan")
}

type statsPage struct {
	pageBase
	O                         *stats.Overview
	At                        time.Time
	MergedChart, ModulesChart barChart
	OutcomesChart             barChart
	Contributors              []stats.Contributor
	MoreContributors          int
}

// contributorsShown is how many contributors /stats lists.
const contributorsShown = 20

// registryStats serves /stats: the registry's success metrics.
func (s *Server) registryStats(c echo.Context) error {
	ctx := c.Request().Context()
	snap, err := s.catalog.current(ctx)
	if err != nil {
		return err
	}
	t, at, err := s.stats.Totals(ctx, snap.generation)
	if err != nil {
		return err
	}
	return s.cachedPage(c, snap, "/stats", at.Format(time.RFC3339Nano), func() (string, any, error) {
		return "stats", s.statsPage(stats.Overall(t, snap.entries), at), nil
	})
}

func (s *Server) statsPage(o *stats.Overview, at time.Time) statsPage {
	page := statsPage{pageBase: pageBase{Title: "Statistics", Nav: "stats", Version: s.version}, O: o, At: at}
	page.MergedChart = barChart{ID: "merged", Title: "SIPs merged by month", Desc: "New SIPs per month, by when their first version reached the registry.",
		Series: []chartSeries{{Name: "SIPs"}}}
	for _, p := range o.Merged {
		page.MergedChart.Labels = append(page.MergedChart.Labels, p.Start.Format("Jan 2006"))
		page.MergedChart.Series[0].Values = append(page.MergedChart.Series[0].Values, float64(p.Attempts))
	}
	page.ModulesChart = barChart{ID: "modules", Title: "Evaluations by module", Desc: "Evaluations (wide bars) and active evaluations (narrow bars) in each module.",
		Series: []chartSeries{{Name: "Evaluations"}, {Name: "Active"}}}
	for _, m := range o.Modules {
		page.ModulesChart.Labels = append(page.ModulesChart.Labels, m.Module)
		page.ModulesChart.Series[0].Values = append(page.ModulesChart.Series[0].Values, float64(m.Evaluations))
		page.ModulesChart.Series[1].Values = append(page.ModulesChart.Series[1].Values, float64(m.Active))
	}
	page.OutcomesChart = barChart{ID: "outcomes", Title: "Attempts by outcome", Desc: "Every attempt that ended, by how it ended.",
		Series: []chartSeries{{Name: "Attempts"}}}
	for _, oc := range o.Outcomes {
		page.OutcomesChart.Labels = append(page.OutcomesChart.Labels, outcomeTitle(oc.Outcome))
		page.OutcomesChart.Series[0].Values = append(page.OutcomesChart.Series[0].Values, float64(oc.N))
	}
	page.Contributors = o.Contributors
	if n := len(o.Contributors); n > contributorsShown {
		page.Contributors, page.MoreContributors = o.Contributors[:contributorsShown], n-contributorsShown
	}
	return page
}

// overview is the registry's success metrics and when they were counted.
func (s *Server) overview(ctx context.Context) (*stats.Overview, time.Time, error) {
	snap, err := s.catalog.current(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	t, at, err := s.stats.Totals(ctx, snap.generation)
	if err != nil {
		return nil, time.Time{}, err
	}
	return stats.Overall(t, snap.entries), at, nil
}

// percent writes a rate as "42%" ("–" without a denominator).
func percent(r stats.Rate) string {
	if !r.Known() {
		return "–"
	}
	p := r.Percent()
	if p > 0 && p < 1 {
		return "<1%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// duration writes a time to pass: minutes, hours or days.
func duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1f h", d.Hours())
	}
	return fmt.Sprintf("%.1f days", d.Hours()/24)
}
