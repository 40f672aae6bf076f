package stats

import (
	"slices"
	"sort"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
)

// Bins is how many bins the score distribution has: tenths of the
// maximum score, the last one holding full marks.
const Bins = 10

// LeaderSize is how many agents a leaderboard keeps before privacy is
// applied: pages show the first ten of them whose results are public.
const LeaderSize = 50

// Evaluation is what one evaluation's results add up to.
type Evaluation struct {
	// Attempts counts every result; Graded those that are a grade of the
	// agent's work (passed, failed, expired); Passes the passed ones.
	Attempts, Graded, Passes int
	// Asserted counts the results another registry asserted without
	// evidence (backfilled, provisioned): left out of every figure, unless
	// IncludesAsserted.
	Asserted         int
	IncludesAsserted bool
	// Agents that attempted it, and that passed it.
	Agents, AgentsPassed int
	// PassRate is passes of graded attempts.
	PassRate Rate
	// Outcomes counts results by outcome, in the order of Outcomes.
	Outcomes []OutcomeCount
	// Scores is the distribution of scores as a share of the maximum:
	// Scores[i] counts scores in [i/10, (i+1)/10), full marks in the last.
	Scores [Bins]int
	Scored int
	// TimeToPass is the median, over agents that passed, of the time from
	// their first registration for the evaluation to their first pass;
	// TimeToPassN how many agents it is the median of.
	TimeToPass  time.Duration
	TimeToPassN int
	// Versions, oldest first as the results met them.
	Versions []VersionStats
	// Periods are attempts and passes over time, in weeks, or in months
	// when the results span more than half a year.
	Periods []Period
	// Monthly says Periods are months.
	Monthly bool
	// Best holds each agent's best scored result, best first (ties: the
	// earlier); First each agent's first pass, earliest first. Both keep
	// up to LeaderSize agents, public or not: pages keep the public ones.
	Best, First []Standing
}

// OutcomeCount is how many results ended one way.
type OutcomeCount struct {
	Outcome evaluation.Outcome
	N       int
}

// Outcomes is the order outcomes are shown in.
var Outcomes = []evaluation.Outcome{
	evaluation.OutcomePassed, evaluation.OutcomeFailed, evaluation.OutcomeExpired,
	evaluation.OutcomeCancelled, evaluation.OutcomeNotGraded, evaluation.OutcomeInfrastructureFailure,
}

// VersionStats are the figures of the attempts made under one version.
type VersionStats struct {
	Version          string
	Attempts, Passes int
	PassRate         Rate
	// MedianScore is the median score as a share of the maximum (0–1),
	// when Scored > 0.
	MedianScore float64
	Scored      int
}

// Period is a week or a month of attempts.
type Period struct {
	Start            time.Time
	Attempts, Passes int
}

// Standing is an agent on a leaderboard.
type Standing struct {
	AgentID, ResultID string
	Score, MaxScore   float64 // Best only
	At                time.Time
}

// Asserted says whether figures count the results another registry
// asserted without evidence (backfilled, provisioned).
type Asserted bool

// The two ways to count asserted results. Statistics and leaderboards
// leave them out unless asked (a page's or a request's switch).
const (
	LeaveOutAsserted Asserted = false
	IncludeAsserted  Asserted = true
)

// Summarize counts an evaluation's facts (oldest first) as of now, with
// or without the results another registry asserted without evidence.
func Summarize(facts []Fact, now time.Time, asserted Asserted) *Evaluation {
	evidenced, n := Evidenced(facts)
	if asserted == LeaveOutAsserted {
		facts = evidenced
	}
	s := &Evaluation{Attempts: len(facts), Asserted: n, IncludesAsserted: bool(asserted) && n > 0}
	outcomes := map[evaluation.Outcome]int{}
	type agent struct {
		firstReg  time.Time
		firstPass *Fact
		best      *Fact
	}
	agents := map[string]*agent{}
	versions := map[string]*VersionStats{}
	scores := map[string][]float64{}
	for i := range facts {
		f := &facts[i]
		outcomes[f.Outcome]++
		a := agents[f.AgentID]
		if a == nil {
			a = &agent{firstReg: f.RegisteredAt}
			agents[f.AgentID] = a
		}
		if f.RegisteredAt.Before(a.firstReg) {
			a.firstReg = f.RegisteredAt
		}
		v := versions[f.Version]
		if v == nil {
			v = &VersionStats{Version: f.Version}
			versions[f.Version] = v
			s.Versions = append(s.Versions, VersionStats{Version: f.Version})
		}
		v.Attempts++
		passed := f.Outcome == evaluation.OutcomePassed
		if graded(f.Outcome) {
			s.Graded++
			v.PassRate.Of++
		}
		if passed {
			s.Passes++
			v.Passes++
			v.PassRate.N++
			if a.firstPass == nil || f.CompletedAt.Before(a.firstPass.CompletedAt) {
				a.firstPass = f
			}
		}
		if f.Scored && f.MaxScore > 0 {
			share := min(max(f.Score/f.MaxScore, 0), 1)
			s.Scores[min(int(share*Bins), Bins-1)]++
			s.Scored++
			scores[f.Version] = append(scores[f.Version], share)
			if a.best == nil || share > a.best.Score/a.best.MaxScore {
				a.best = f
			}
		}
	}
	s.PassRate = Rate{s.Passes, s.Graded}
	for _, o := range Outcomes {
		if n := outcomes[o]; n > 0 {
			s.Outcomes = append(s.Outcomes, OutcomeCount{o, n})
		}
	}
	for i := range s.Versions {
		v := versions[s.Versions[i].Version]
		if sc := scores[v.Version]; len(sc) > 0 {
			v.MedianScore, v.Scored = median(sc), len(sc)
		}
		s.Versions[i] = *v
	}
	var toPass []float64
	for id, a := range agents {
		if a.firstPass != nil {
			s.AgentsPassed++
			toPass = append(toPass, float64(max(a.firstPass.CompletedAt.Sub(a.firstReg), 0)))
			s.First = append(s.First, Standing{AgentID: id, ResultID: a.firstPass.ResultID, At: a.firstPass.CompletedAt})
		}
		if a.best != nil {
			s.Best = append(s.Best, Standing{AgentID: id, ResultID: a.best.ResultID, Score: a.best.Score, MaxScore: a.best.MaxScore, At: a.best.CompletedAt})
		}
	}
	s.Agents = len(agents)
	if len(toPass) > 0 {
		s.TimeToPass, s.TimeToPassN = time.Duration(median(toPass)), len(toPass)
	}
	sort.Slice(s.First, func(i, j int) bool { return earlier(s.First[i], s.First[j]) })
	sort.Slice(s.Best, func(i, j int) bool {
		a, b := s.Best[i].Score/s.Best[i].MaxScore, s.Best[j].Score/s.Best[j].MaxScore
		if a != b {
			return a > b
		}
		return earlier(s.Best[i], s.Best[j])
	})
	s.First = s.First[:min(len(s.First), LeaderSize)]
	s.Best = s.Best[:min(len(s.Best), LeaderSize)]
	s.Periods, s.Monthly = periods(facts, now)
	return s
}

func earlier(a, b Standing) bool {
	if !a.At.Equal(b.At) {
		return a.At.Before(b.At)
	}
	return a.ResultID < b.ResultID
}

// median of values (which it sorts).
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// maxWeeks is the longest span drawn in weeks; maxMonths the most months
// drawn (the latest ones).
const (
	maxWeeks  = 26
	maxMonths = 36
)

// periods buckets facts by the week (from Monday, UTC) or month they
// ended in, from the first one's to now's, empty periods included.
func periods(facts []Fact, now time.Time) ([]Period, bool) {
	if len(facts) == 0 {
		return nil, false
	}
	first := facts[0].CompletedAt
	for _, f := range facts {
		if f.CompletedAt.Before(first) {
			first = f.CompletedAt
		}
	}
	now = now.UTC()
	if now.Before(first) {
		now = first
	}
	monthly := weekStart(now).Sub(weekStart(first)) > maxWeeks*7*24*time.Hour
	start, next := weekStart, func(t time.Time) time.Time { return t.AddDate(0, 0, 7) }
	if monthly {
		start, next = monthStart, func(t time.Time) time.Time { return t.AddDate(0, 1, 0) }
		if from := start(now).AddDate(0, 1-maxMonths, 0); first.Before(from) {
			first = from
		}
	}
	var out []Period
	index := map[time.Time]int{}
	for t := start(first); !t.After(now); t = next(t) {
		index[t] = len(out)
		out = append(out, Period{Start: t})
	}
	for _, f := range facts {
		i, ok := index[start(f.CompletedAt.UTC())]
		if !ok {
			continue
		}
		out[i].Attempts++
		if f.Outcome == evaluation.OutcomePassed {
			out[i].Passes++
		}
	}
	return out, monthly
}

func weekStart(t time.Time) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
}

func monthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// WithoutScores is a copy of e with nothing drawn from scores: no
// distribution, no median, no leaderboard by score. Pages show it for an
// evaluation whose scores are not public (registry.ScoresPublic): its
// attempts' scores, passed or not, are an oracle of its answer key.
func (e *Evaluation) WithoutScores() *Evaluation {
	out := *e
	out.Scores, out.Scored, out.Best = [Bins]int{}, 0, nil
	out.Versions = make([]VersionStats, len(e.Versions))
	for i, v := range e.Versions {
		v.MedianScore, v.Scored = 0, 0
		out.Versions[i] = v
	}
	return &out
}
