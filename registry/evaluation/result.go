package evaluation

import (
	"fmt"
	"slices"
	"time"

	"github.com/sipregistry/sip/registry"
)

// Passes is the pass rule of every scored evaluation: the score, as a
// percentage of the most it could be, reaches the passing score.
func Passes(score, maxScore, passingScore float64) bool {
	return maxScore > 0 && score/maxScore*100 >= passingScore
}

// PointsFor is the points rule: a pass earns the definition's points. The
// store credits them once per agent and evaluation (its first pass).
func PointsFor(def *Definition, passed bool) float64 {
	if !passed {
		return 0
	}
	return def.Points
}

// MissingPrerequisites is the prerequisite rule: the prerequisites of e
// the agent holds no valid pass of (passes maps evaluation ids to the
// agent's newest pass that has not expired).
func MissingPrerequisites(prerequisites []string, passes map[string]*Result) []string {
	var missing []string
	for _, p := range prerequisites {
		if passes[p] == nil {
			missing = append(missing, p)
		}
	}
	return missing
}

// grade is what a runner decided about an attempt, before it becomes a
// result.
type grade struct {
	outcome         Outcome // "" means passed or failed, from passed
	passed          bool
	score, maxScore *float64
	reason          string         // why it did not pass, shown to the agent
	started         time.Time      // zero: the registration's start
	deadline        time.Time      // zero: no time limit
	submitted       time.Time      // zero: now
	execution       []Check        // gate 2 checks besides the deadline
	output          []Check        // gate 3: the submission's shape
	goal            []Check        // gate 4 checks besides the pass rule
	inputs          map[string]any // digested values are recorded as keyed digests
	details         map[string]any
	// prerequisites are the definition's prerequisites, checked when the
	// agent registered.
}

// newResult is the one place a result is built: the version, content
// hash and commit of the pinned definition, the execution record with its
// gates, the expiry of a pass (valid_days) and the points a pass earns.
// It returns the result and the points to credit.
func (s *Service) newResult(def *Definition, reg *Registration, g grade, now time.Time) (*Result, float64) {
	if g.outcome == "" {
		g.outcome = OutcomeFailed
		if g.passed {
			g.outcome = OutcomePassed
		}
	}
	g.passed = g.outcome == OutcomePassed
	if !g.passed {
		g = conceal(g, def.SIP.EffectiveReveal())
	}
	started := g.started
	if started.IsZero() {
		started = reg.StartedAt
	}
	if started.IsZero() {
		started = reg.RegisteredAt
	}
	submitted := g.submitted
	if submitted.IsZero() {
		submitted = now
	}
	r := &Result{ID: registry.NewID("res_"), RegistrationID: reg.ID, AgentID: reg.AgentID, EvaluationID: reg.EvaluationID,
		VersionID: def.VersionID, Version: def.Version, ContentSHA256: def.ContentSHA256, Passed: g.passed, Outcome: g.outcome,
		Score: g.score, MaxScore: g.maxScore, CompletedAt: now, Details: g.details}
	if r.Details == nil {
		r.Details = map[string]any{}
	}
	if g.reason != "" && !g.passed {
		r.Details["reason"] = g.reason
	}
	if g.passed && def.Config.ValidDays > 0 {
		r.ExpiresAt = now.AddDate(0, 0, def.Config.ValidDays)
	}
	r.Trace = s.record(def, reg, g, started, submitted, now)
	return r, PointsFor(def, g.passed)
}

// record builds the execution record: each gate with the checks it
// performed, computed from what happened.
func (s *Service) record(def *Definition, reg *Registration, g grade, started, submitted, now time.Time) Trace {
	info := outcomeInfo(g.outcome)
	inputs := make(map[string]string, len(g.inputs))
	for k, v := range g.inputs {
		if d, ok := v.(digested); ok {
			inputs[k] = digestInput(s.recordKey, d.v)
		} else {
			inputs[k] = fmt.Sprint(v)
		}
	}
	t := Trace{Outcome: g.outcome, Status: info.Status, ExitCode: info.ExitCode, Handler: def.Handler, StartedAt: started, CompletedAt: now,
		DurationMS: now.Sub(started).Milliseconds(), Inputs: inputs, Version: def.Version, ContentSHA256: def.ContentSHA256,
		CommitSHA: def.CommitSHA, Build: s.build}
	pre := []Check{
		{Name: "registration", Passed: true, Message: "registration " + reg.ID + " was open"},
		{Name: "version", Passed: reg.VersionID == def.VersionID, Message: "graded under version " + def.Version + " (sha256 " + short(def.ContentSHA256) + "), the one registered under"},
	}
	if len(def.Prerequisites) > 0 {
		pre = append(pre, Check{Name: "prerequisites", Passed: true, Message: "held a valid pass of " + joinIDs(def.Prerequisites) + " when registering"})
	}
	t.Gates = append(t.Gates, gate(1, "precondition", reg.RegisteredAt, pre))
	deadline := Check{Name: "time_limit", Passed: true, Message: "no time limit"}
	if !g.deadline.IsZero() {
		deadline.Passed = !submitted.After(g.deadline)
		deadline.Message = fmt.Sprintf("submitted %s after the start; the limit was %s", round(submitted.Sub(started)), round(g.deadline.Sub(started)))
	}
	if g.outcome == OutcomeExpired && deadline.Passed {
		deadline = Check{Name: "time_limit", Passed: false, Message: "no submission before the time limit"}
	}
	exec := g.execution
	if !slices.ContainsFunc(exec, func(c Check) bool { return c.Name == deadline.Name }) {
		exec = append([]Check{deadline}, exec...)
	}
	switch g.outcome {
	case OutcomeCancelled:
		exec = append(exec, Check{Name: "completed", Passed: false, Message: "cancelled by the agent before a submission"})
	case OutcomeNotGraded:
		exec = append(exec, Check{Name: "graded", Passed: false, Message: g.reason})
	case OutcomeInfrastructureFailure:
		exec = append(exec, Check{Name: "judged", Passed: false, Message: g.reason})
	}
	t.Gates = append(t.Gates, gate(2, "execution", submitted, exec))
	if g.outcome != OutcomePassed && g.outcome != OutcomeFailed {
		return t // the attempt never reached its output and goal
	}
	out := g.output
	if len(out) == 0 {
		out = []Check{{Name: "shape", Passed: true, Message: "the submission has the documented shape"}}
	}
	output := gate(3, "output", submitted, out)
	t.Gates = append(t.Gates, output)
	goal := slices.Clone(g.goal)
	msg := "passed"
	if !g.passed {
		msg = g.reason
	}
	if g.score != nil && g.maxScore != nil {
		msg = fmt.Sprintf("scored %g of %g", *g.score, *g.maxScore)
	}
	goal = append(goal, Check{Name: "pass", Passed: g.passed, Message: msg})
	t.Gates = append(t.Gates, gate(4, "goal", now, goal))
	if !output.Passed && !g.passed {
		t.ExitCode = ExitDataError
	}
	return t
}

// acceptedInTime is the time check of a graded job: a submission after
// the limit is never queued.
var acceptedInTime = Check{Name: "time_limit", Passed: true, Message: "submitted before the time limit (checked when it was accepted)"}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

func joinIDs(ids []string) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += id
	}
	return out
}

// conceal keeps of an attempt that did not pass only what the SIP lets it
// reveal (SIP.EffectiveReveal): with pass_fail, no score, no per-item
// grade and no reason that holds them (an agent that sees how many it got
// right learns the answer key in a few attempts); with none, not even
// why. The result, its execution record, the job and the pages all show
// what is left.
func conceal(g grade, reveal string) grade {
	if reveal == "" || reveal == registry.RevealScore {
		return g
	}
	if g.score != nil && g.outcome == OutcomeFailed {
		// A reason written from the score ("scored 10 of 30") is the score.
		g.reason = "below the passing score"
	}
	g.score, g.maxScore, g.goal = nil, nil, nil
	kept := map[string]any{}
	for _, k := range []string{"session_id", "proctor_agent_id"} {
		if v, ok := g.details[k]; ok {
			kept[k] = v
		}
	}
	g.details = kept
	if reveal == registry.RevealNone {
		g.reason, g.output = "did not pass", nil
	}
	return g
}
