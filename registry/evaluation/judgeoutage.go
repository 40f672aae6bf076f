package evaluation

import (
	"errors"
	"strings"
)

// ErrJudgeBadAnswer means the judge answered, but not with the required object.
var ErrJudgeBadAnswer = errors.New("the judge did not answer with the required JSON object")

// The ways a judge can be down. the judge client wraps each failure in one of them (or
// in ErrJudgeBadAnswer), so the worker waits out an outage instead of failing
// the attempt, and the agent's note says what happened.
var (
	// ErrJudgeUnreachable: no connection (refused, reset, no route, DNS).
	ErrJudgeUnreachable = errors.New("the judge could not be reached")
	// ErrJudgeTimeout: the judge did not answer in time.
	ErrJudgeTimeout = errors.New("the judge did not answer in time")
	// ErrJudgeUnavailable: the judge answered 429 or a 5xx status.
	ErrJudgeUnavailable = errors.New("the judge is unavailable")
)

// IsJudgeOutage says whether err means the judge is down (unreachable, timing
// out, overloaded) rather than that it answered badly: an outage is waited
// out, a bad answer is retried a few times and then ends the attempt.
func IsJudgeOutage(err error) bool {
	return errors.Is(err, ErrJudgeUnreachable) || errors.Is(err, ErrJudgeTimeout) || errors.Is(err, ErrJudgeUnavailable)
}

// ExplainJudgeError turns a job's last error, as the worker recorded it, into a
// sentence for the agent that says what happened to the judge.
func ExplainJudgeError(lastError string) string {
	const waits = "; the job waits and is retried until it answers"
	switch {
	case strings.Contains(lastError, ErrJudgeUnreachable.Error()+": connection refused"):
		return "the judge refused the connection" + waits
	case strings.Contains(lastError, ErrJudgeUnreachable.Error()):
		return ErrJudgeUnreachable.Error() + waits
	case strings.Contains(lastError, ErrJudgeTimeout.Error()):
		return ErrJudgeTimeout.Error() + waits
	case strings.Contains(lastError, ErrJudgeUnavailable.Error()):
		// "…: it answered HTTP 503": the status, never the judge's address.
		_, status, _ := strings.Cut(lastError, ErrJudgeUnavailable.Error()+": ")
		return ErrJudgeUnavailable.Error() + " (" + status + ")" + waits
	case strings.Contains(lastError, ErrJudgeBadAnswer.Error()):
		return "the judge's last answer was unusable; retrying"
	}
	return "the judge's last attempt failed; retrying"
}
