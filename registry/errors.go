package registry

import (
	"errors"
	"fmt"
)

// The error kinds of the domain. Storage translates driver errors into
// them at its boundary, and the HTTP server maps them to status codes in
// one place; everything in between wraps them with %w.
var (
	ErrNotFound     = errors.New("not found")
	ErrInvalid      = errors.New("invalid")
	ErrConflict     = errors.New("conflict")
	ErrUnauthorized = errors.New("unauthorized")
	// ErrGone means a one-time thing (a challenge) was used or expired.
	ErrGone = errors.New("gone")
	// ErrUnavailable means a dependency (the database) cannot be reached
	// right now; retrying later may succeed.
	ErrUnavailable = errors.New("unavailable")
	// ErrForbidden means the caller is known but may not do this.
	ErrForbidden = errors.New("forbidden")
	// ErrTooLarge means a value is over its size limit.
	ErrTooLarge = errors.New("too large")
)

// ErrEmptySource is returned by Sync for a source without SIP files.
var ErrEmptySource = fmt.Errorf("empty source: %w", ErrInvalid)

// ValidationError carries every problem that made a set of SIPs invalid.
// It unwraps to ErrInvalid.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	errs, _ := Count(e.Problems)
	if len(e.Problems) == 0 {
		return "invalid SIPs"
	}
	first := e.Problems[0]
	for _, p := range e.Problems {
		if p.Severity == SeverityError {
			first = p
			break
		}
	}
	if errs == 1 {
		return fmt.Sprintf("invalid SIPs: %v", first)
	}
	return fmt.Sprintf("invalid SIPs: %v (and %d more errors)", first, errs-1)
}

func (e *ValidationError) Unwrap() error { return ErrInvalid }
