package evaluation

import (
	"time"
)

// Outcome is how an attempt ended. Every attempt that was started ends in
// one, stored as its result, so an agent can see it, statistics count it,
// and the agent may register again.
type Outcome string

// Outcomes.
const (
	// OutcomePassed: the goal was achieved.
	OutcomePassed Outcome = "passed"
	// OutcomeFailed: the attempt was graded and did not pass.
	OutcomeFailed Outcome = "failed"
	// OutcomeExpired: the time limit ran out before a submission.
	OutcomeExpired Outcome = "expired"
	// OutcomeCancelled: the agent cancelled a started attempt.
	OutcomeCancelled Outcome = "cancelled"
	// OutcomeNotGraded: the attempt ended without its grader's grade (a
	// session whose time ran out with no proctor's grade).
	OutcomeNotGraded Outcome = "not_graded"
	// OutcomeInfrastructureFailure: the judge could not grade it (down,
	// or answering unusably, for longer than the job's life).
	OutcomeInfrastructureFailure Outcome = "infrastructure_failure"
)

// Exit codes of execution records, after BSD sysexits and the assessment
// design's table.
const (
	ExitSuccess     = 0
	ExitFailure     = 1  // graded, and the goal was not achieved
	ExitIncomplete  = 3  // cancelled before it finished
	ExitDataError   = 65 // the submission had the wrong shape
	ExitUnavailable = 69 // the judge could not be reached or used
	ExitTempFail    = 75 // not graded; nothing the agent did wrong
	ExitTimeout     = 81 // the time limit ran out
)

// OutcomeInfo describes an outcome in execution records.
type OutcomeInfo struct {
	Outcome  Outcome
	Status   string // the record's status
	ExitCode int
	Meaning  string
}

// Outcomes is the one table from outcomes to the status and exit code of
// execution records (docs/ARCHITECTURE.md shows it). A failed attempt
// whose submission failed the output gate exits with ExitDataError.
var Outcomes = []OutcomeInfo{
	{OutcomePassed, "success", ExitSuccess, "graded, and it passed"},
	{OutcomeFailed, "failure", ExitFailure, "graded, and it did not pass (65 when the submission had the wrong shape)"},
	{OutcomeExpired, "timeout", ExitTimeout, "the time limit ran out"},
	{OutcomeCancelled, "cancelled", ExitIncomplete, "the agent cancelled it after starting"},
	{OutcomeNotGraded, "not_graded", ExitTempFail, "it ended without its grader's grade"},
	{OutcomeInfrastructureFailure, "error", ExitUnavailable, "the judge could not grade it"},
}

func outcomeInfo(o Outcome) OutcomeInfo {
	for _, i := range Outcomes {
		if i.Outcome == o {
			return i
		}
	}
	return OutcomeInfo{o, "failure", ExitFailure, ""}
}

// Trace is the execution record of an attempt (the assessment design):
// how it ended, the gates it went through with the checks each performed,
// its timings, its inputs as hashes (never raw answers), the definition it
// was graded under and the sip build that graded it.
type Trace struct {
	Status        string            `json:"status"`
	ExitCode      int               `json:"exit_code"`
	Outcome       Outcome           `json:"outcome,omitempty"`
	Gates         []Gate            `json:"gates"`
	StartedAt     time.Time         `json:"started_at"`
	CompletedAt   time.Time         `json:"completed_at"`
	DurationMS    int64             `json:"duration_ms"`
	Inputs        map[string]string `json:"inputs"`
	Handler       string            `json:"handler"`
	Version       string            `json:"version,omitempty"`
	ContentSHA256 string            `json:"content_sha256,omitempty"`
	CommitSHA     string            `json:"commit_sha,omitempty"`
	Build         string            `json:"build,omitempty"`
}

// Gate is one checkpoint of an attempt: precondition (1), execution (2),
// output (3), goal (4).
type Gate struct {
	Gate      int       `json:"gate"`
	Name      string    `json:"name"`
	Passed    bool      `json:"passed"`
	Detail    string    `json:"detail,omitempty"`
	CheckedAt time.Time `json:"checked_at,omitzero"`
	Checks    []Check   `json:"checks,omitempty"`
}

// Check is one check a gate performed.
type Check struct {
	Name    string `json:"name"`
	Passed  bool   `json:"passed"`
	Message string `json:"message,omitempty"`
}

func gate(n int, name string, at time.Time, checks []Check) Gate {
	g := Gate{Gate: n, Name: name, Passed: true, CheckedAt: at, Checks: checks}
	for _, c := range checks {
		if !c.Passed {
			g.Passed = false
			if g.Detail == "" {
				g.Detail = c.Message
			}
		}
	}
	return g
}

// NewTrace builds a plain execution record for a result made outside an
// attempt's runtime (imports and fixtures): four gates, the last one
// passed or not.
func NewTrace(handler string, started, completed time.Time, passed, late bool, detail string, inputs map[string]string) Trace {
	o := OutcomeFailed
	switch {
	case passed:
		o = OutcomePassed
	case late:
		o = OutcomeExpired
	}
	info := outcomeInfo(o)
	if inputs == nil {
		inputs = map[string]string{}
	}
	return Trace{Status: info.Status, ExitCode: info.ExitCode, Outcome: o, Handler: handler, StartedAt: started, CompletedAt: completed,
		DurationMS: completed.Sub(started).Milliseconds(), Inputs: inputs,
		Gates: []Gate{
			{Gate: 1, Name: "precondition", Passed: true},
			{Gate: 2, Name: "execution", Passed: !late},
			{Gate: 3, Name: "output", Passed: true},
			{Gate: 4, Name: "goal", Passed: passed, Detail: detail},
		}}
}
