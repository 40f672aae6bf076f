package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// Error is an error the API reports to the caller, in the error model of
// the OpenAPI document (api/openapi.yaml). Handlers return it (or a domain error) and the one
// error handler writes it.
type Error struct {
	Status  int
	Code    string
	Message string
	Hint    string
	Field   string   // the request field at fault, for validation_failed
	Missing []string // unmet prerequisites, for prerequisites_not_met
	Err     error    // the cause, logged, never shown
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

func badRequest(field, msg, hint string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "validation_failed", Field: field, Message: msg, Hint: hint}
}

func notFound(msg, hint string) *Error {
	return &Error{Status: http.StatusNotFound, Code: "not_found", Message: msg, Hint: hint}
}

type errorDetail struct {
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Hint    string   `json:"hint"`
	Field   string   `json:"field,omitempty"`
	Missing []string `json:"missing,omitempty"`
}

type errorBody struct {
	Success     bool        `json:"success"`
	Error       string      `json:"error"`
	Hint        string      `json:"hint"`
	ErrorDetail errorDetail `json:"error_detail"`
	RequestID   string      `json:"request_id"`
}

// toAPIError maps any error to what the caller sees: domain error kinds by
// a table, echo's own errors by status, anything else to a 500 that shows
// no internal text.
func toAPIError(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var rf *evaluation.Refusal
	if errors.As(err, &rf) {
		for _, k := range kinds {
			if errors.Is(rf.Kind, k.err) {
				return &Error{Status: k.status, Code: rf.Code, Message: rf.Message, Hint: rf.Hint, Field: rf.Field, Missing: rf.Missing}
			}
		}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return &Error{Status: he.Code, Code: "not_found", Message: "no such endpoint", Hint: "See /api/v1/openapi.json for the endpoints."}
		case http.StatusMethodNotAllowed:
			return &Error{Status: he.Code, Code: "method_not_allowed", Message: "method not allowed on this endpoint", Hint: "See /api/v1/openapi.json for the methods."}
		case http.StatusRequestEntityTooLarge:
			return &Error{Status: he.Code, Code: "payload_too_large", Message: "request body too large", Hint: "Request bodies are limited to 1 MiB (GitHub webhooks to 25 MiB)."}
		case http.StatusUnsupportedMediaType:
			return &Error{Status: he.Code, Code: "unsupported_media_type", Message: "send JSON", Hint: "Set Content-Type: application/json."}
		case http.StatusBadRequest:
			return &Error{Status: he.Code, Code: "bad_request", Message: "malformed request", Hint: "Check the request against /api/v1/openapi.json.", Err: err}
		}
		if he.Code < 500 {
			return &Error{Status: he.Code, Code: "bad_request", Message: http.StatusText(he.Code), Err: err}
		}
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			return &Error{Status: k.status, Code: k.code, Message: k.message, Hint: k.hint, Err: err}
		}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error",
		Hint: "Try again; if it persists, report the request id.", Err: err}
}

var kinds = []struct {
	err     error
	status  int
	code    string
	message string
	hint    string
}{
	{registry.ErrNotFound, http.StatusNotFound, "not_found", "not found", "Check the id."},
	{registry.ErrInvalid, http.StatusBadRequest, "validation_failed", "invalid request", "Check the request against /api/v1/openapi.json."},
	{registry.ErrConflict, http.StatusConflict, "conflict", "conflict", "Reload and try again."},
	{registry.ErrGone, http.StatusGone, "gone", "gone", "Start again."},
	{registry.ErrUnauthorized, http.StatusUnauthorized, "unauthorized", "unauthorized", "Send Authorization: Bearer <api_key>."},
	{registry.ErrForbidden, http.StatusForbidden, "forbidden", "forbidden", "Act on your own resources."},
	{registry.ErrTooLarge, http.StatusRequestEntityTooLarge, "payload_too_large", "too large", "Shorten it."},
	{evaluation.ErrUnprocessable, http.StatusUnprocessableEntity, "validation_failed", "cannot be processed", "Check the request against /api/v1/openapi.json."},
	{registry.ErrUnavailable, http.StatusServiceUnavailable, "unavailable", "the registry database is unavailable", "Try again shortly."},
}

// handleError is echo's HTTPErrorHandler: the one place errors become
// responses. Server-side failures are logged once, here, with the request
// id; their text never reaches the caller.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae := toAPIError(err)
	id := requestID(c)
	if ae.Status >= 500 {
		level := slog.LevelError
		if ae.Status == http.StatusServiceUnavailable {
			level = slog.LevelWarn // an outage is reported by /readyz; one line per request is enough
		}
		s.log.LogAttrs(c.Request().Context(), level, "request failed",
			slog.String("request_id", id), slog.String("route", c.Path()), slog.Int("status", ae.Status), slog.Any("error", err))
	}
	if wantsHTML(c) && c.Request().Method != http.MethodHead {
		if ae.Status == http.StatusServiceUnavailable {
			c.Response().Header().Set("Retry-After", "5")
		}
		if werr := s.errorPage(c, ae); werr != nil {
			s.log.Warn("writing error page", "request_id", id, "error", werr)
		}
		return
	}
	body := errorBody{Error: ae.Message, Hint: ae.Hint, RequestID: id,
		ErrorDetail: errorDetail{Code: ae.Code, Message: ae.Message, Hint: ae.Hint, Field: ae.Field, Missing: ae.Missing}}
	if ae.Status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "5")
	}
	if c.Request().Method == http.MethodHead {
		c.NoContent(ae.Status)
		return
	}
	if werr := c.JSON(ae.Status, body); werr != nil {
		s.log.Warn("writing error response", "request_id", id, "error", werr)
	}
}
