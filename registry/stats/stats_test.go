package stats

import (
	"fmt"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) // a Monday

func fact(agent, version string, o evaluation.Outcome, score float64, reg, done time.Duration) Fact {
	f := Fact{ResultID: fmt.Sprintf("res_%s_%s", agent, done), AgentID: agent, Version: version, Outcome: o,
		RegisteredAt: t0.Add(reg), CompletedAt: t0.Add(done)}
	if score >= 0 {
		f.Score, f.MaxScore, f.Scored = score, 10, true
	}
	return f
}

const day = 24 * time.Hour

func TestSummarize(t *testing.T) {
	facts := []Fact{
		fact("ada", "1.0.0", evaluation.OutcomeFailed, 3, 0, time.Hour),
		fact("bob", "1.0.0", evaluation.OutcomePassed, 10, 0, 2*time.Hour),
		fact("ada", "1.1.0", evaluation.OutcomePassed, 8, day, 3*day),      // ada: 3 days from first registration
		fact("cy", "1.1.0", evaluation.OutcomeCancelled, -1, 8*day, 8*day), // not graded
		fact("dee", "1.1.0", evaluation.OutcomeExpired, 0, 9*day, 9*day),
	}
	s := Summarize(facts, t0.Add(20*day), LeaveOutAsserted)
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"attempts", s.Attempts, 5},
		{"graded", s.Graded, 4},
		{"passes", s.Passes, 2},
		{"pass rate", s.PassRate, Rate{2, 4}},
		{"agents", s.Agents, 4},
		{"agents passed", s.AgentsPassed, 2},
		{"scores", s.Scores, [Bins]int{1, 0, 0, 1, 0, 0, 0, 0, 1, 1}},
		{"scored", s.Scored, 4},
		// bob: 2 h; ada: 3 days → median 1.5 days + 1 h
		{"time to pass", s.TimeToPass, (3*day + 2*time.Hour) / 2},
		{"versions", fmt.Sprint(s.Versions), "[{1.0.0 2 1 {1 2} 0.65 2} {1.1.0 3 1 {1 2} 0.4 2}]"},
		{"outcomes", fmt.Sprint(s.Outcomes), "[{passed 2} {failed 1} {expired 1} {cancelled 1}]"},
		{"best", fmt.Sprint(agentsOf(s.Best)), "[bob ada dee]"},
		{"first", fmt.Sprint(agentsOf(s.First)), "[bob ada]"},
		{"weekly", s.Monthly, false},
		{"periods", fmt.Sprint(periodCounts(s.Periods)), "[3/2 2/0 0/0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

func agentsOf(st []Standing) []string {
	var out []string
	for _, s := range st {
		out = append(out, s.AgentID)
	}
	return out
}

func periodCounts(ps []Period) []string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%d/%d", p.Attempts, p.Passes))
	}
	return out
}

func TestPeriods(t *testing.T) {
	for _, c := range []struct {
		name    string
		span    time.Duration
		monthly bool
		n       int
	}{
		{"one week", 0, false, 1},
		{"26 weeks", 26 * 7 * day, false, 27},
		{"a year, in months", 365 * day, true, 13},
		{"ten years, the last 36 months", 3650 * day, true, 36},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps, monthly := periods([]Fact{{CompletedAt: t0}}, t0.Add(c.span))
			if monthly != c.monthly || len(ps) != c.n {
				t.Errorf("got %d periods, monthly %v; want %d, %v", len(ps), monthly, c.n, c.monthly)
			}
			if got := ps[len(ps)-1].Start; got.After(t0.Add(c.span)) {
				t.Errorf("the last period starts %v, after now", got)
			}
		})
	}
	if ps, _ := periods(nil, t0); ps != nil {
		t.Errorf("no facts: %v, want none", ps)
	}
}

func TestSummarizeNothing(t *testing.T) {
	s := Summarize(nil, t0, LeaveOutAsserted)
	if s.Attempts != 0 || s.PassRate.Known() || s.TimeToPassN != 0 || len(s.Periods) != 0 {
		t.Errorf("%+v; want empty figures", s)
	}
}

func TestOverall(t *testing.T) {
	entry := func(id string, typ registry.Type, module string, status registry.Status, author string) *registry.Entry {
		e := &registry.Entry{}
		e.ID, e.Type, e.Module, e.Status, e.Author = id, typ, module, status, author
		return e
	}
	removed := entry("gone", registry.TypeComplexBenchmark, "core", registry.StatusDeprecated, "@ada")
	removed.Removed = true
	o := Overall(Totals{
		Agents: 10, AgentsRegistered: 4,
		Registrations: map[evaluation.RegistrationStatus]int{evaluation.RegCompleted: 6, evaluation.RegCancelled: 2, evaluation.RegInProgress: 1},
		Outcomes:      map[evaluation.Outcome]int{evaluation.OutcomePassed: 3, evaluation.OutcomeFailed: 2, evaluation.OutcomeExpired: 1, evaluation.OutcomeCancelled: 2},
		FirstSynced:   map[string]time.Time{"a": t0, "b": t0.AddDate(0, 2, 0), "p": t0},
	}, []*registry.Entry{
		entry("a", registry.TypeComplexBenchmark, "core", registry.StatusActive, "Ada (@ada), Bob (@bob)"),
		entry("b", registry.TypeAgentCertification, "safety", registry.StatusDraft, "@ada"),
		entry("p", registry.TypeProcess, "meta", registry.StatusActive, "Cy Young <cy@example.org>"),
		removed,
	})
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"adoption", o.Adoption, Rate{4, 10}},
		{"completion", o.Completion, Rate{6, 8}},
		{"open", o.Open, 1},
		{"pass rate", o.PassRate, Rate{3, 6}},
		{"contributors", fmt.Sprint(o.Contributors), "[{@ada 2} {@bob 1} {Cy Young 1}]"},
		{"merged", fmt.Sprint(periodCounts(o.Merged)), "[2/0 0/0 1/0]"},
		{"modules", fmt.Sprint(o.Modules), "[{core 1 1} {safety 1 0}]"},
		{"active modules", o.ActiveModules, 1},
		{"evaluations", fmt.Sprint(o.Evaluations, o.Active), "2 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

// TestSummarizeAsserted: results another registry asserted without
// evidence are left out of every figure and leaderboard unless included,
// and counted either way.
func TestSummarizeAsserted(t *testing.T) {
	graded := fact("ada", "1.0.0", evaluation.OutcomePassed, 9, 0, time.Hour)
	imported := fact("bob", "1.0.0", evaluation.OutcomeFailed, 2, 0, 2*time.Hour)
	imported.Provenance = evaluation.ProvenanceImported
	backfilled := fact("cy", "1.0.0", evaluation.OutcomePassed, -1, 0, 30*time.Minute)
	backfilled.Provenance = evaluation.ProvenanceBackfilled
	provisioned := fact("dee", "1.0.0", evaluation.OutcomePassed, -1, 0, 40*time.Minute)
	provisioned.Provenance = evaluation.ProvenanceProvisioned
	facts := []Fact{backfilled, provisioned, graded, imported}
	for _, tc := range []struct {
		asserted                 Asserted
		attempts, passes, firsts int
		includes                 bool
	}{
		{LeaveOutAsserted, 2, 1, 1, false},
		{IncludeAsserted, 4, 3, 3, true},
	} {
		t.Run(fmt.Sprint(tc.asserted), func(t *testing.T) {
			s := Summarize(facts, t0.Add(day), tc.asserted)
			if s.Attempts != tc.attempts || s.Passes != tc.passes || len(s.First) != tc.firsts || s.Asserted != 2 || s.IncludesAsserted != tc.includes {
				t.Errorf("Summarize(%v) = %d attempts, %d passes, %d first passes, %d asserted, includes %v; want %d, %d, %d, 2, %v",
					tc.asserted, s.Attempts, s.Passes, len(s.First), s.Asserted, s.IncludesAsserted, tc.attempts, tc.passes, tc.firsts, tc.includes)
			}
		})
	}
}
