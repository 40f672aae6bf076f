package evaluation

import (
	"errors"
	"fmt"

	"github.com/sipregistry/sip/registry"
)

// Refusal is an operation the service refuses, with what the caller
// needs to put it right. It unwraps to its kind (registry.ErrConflict,
// ErrForbidden, …), which the HTTP server maps to a status in one place.
type Refusal struct {
	Kind    error
	Code    string
	Message string
	Hint    string
	Field   string   // the request field at fault
	Missing []string // unmet prerequisites
}

func (r *Refusal) Error() string { return r.Message }
func (r *Refusal) Unwrap() error { return r.Kind }

func refuse(kind error, code, msg, hint string) *Refusal {
	return &Refusal{Kind: kind, Code: code, Message: msg, Hint: hint}
}

func conflict(code, msg, hint string) *Refusal { return refuse(registry.ErrConflict, code, msg, hint) }

func forbidden(code, msg, hint string) *Refusal {
	return refuse(registry.ErrForbidden, code, msg, hint)
}

func notFound(msg, hint string) *Refusal { return refuse(registry.ErrNotFound, "not_found", msg, hint) }

func invalid(field, msg, hint string) *Refusal {
	r := refuse(registry.ErrInvalid, "validation_failed", msg, hint)
	r.Field = field
	return r
}

// missing refuses a request that lacks a required field: 400, naming
// it. Every required field of every submission is refused this way.
func missing(field, hint string) *Refusal {
	return invalid(field, field+" is required", hint)
}

func tooLarge(field, msg, hint string) *Refusal {
	r := refuse(registry.ErrTooLarge, "payload_too_large", msg, hint)
	r.Field = field
	return r
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// NotRegistered is the refusal of an operation that needs an open
// registration for e.
func NotRegistered(e *registry.Entry) *Refusal {
	return conflict("not_registered", "no open registration for "+e.ID, "Register first: POST /api/v1/evaluations/"+e.ID+"/register.")
}

// notRegisteredToSubmit adds to a not_registered refusal of a submission
// that a registration takes one result.
func notRegisteredToSubmit(e *registry.Entry) *Refusal {
	r := NotRegistered(e)
	r.Hint += " A registration takes one result; register again for another attempt."
	return r
}

// NotMultiAgent refuses proctor work on an evaluation that has none.
func NotMultiAgent(e *registry.Entry) *Refusal {
	return conflict("not_multi_agent", e.ID+" is "+string(e.Type)+": it has no proctor and no sessions",
		"Proctors work on proctored and live class work evaluations, and on benchmarks' free answers when no judge is configured.")
}

var errChallengeUsed = refuse(registry.ErrGone, "gone", "the challenge was already answered", "A challenge takes one answer.")

// isRefusal reports whether err is a refusal (a rule said no), as opposed
// to a failure.
func isRefusal(err error) bool {
	var r *Refusal
	return errors.As(err, &r)
}
