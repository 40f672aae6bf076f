package api

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// bind decodes a JSON request body into v, strictly: the content type must
// be JSON, unknown fields and trailing data are refused, and the size cap
// of withLimits applies.
// noBody checks the body of a request that takes none: nothing, or an
// empty JSON object. Anything else is refused as bind refuses it (415 for
// another media type, 400 for fields), rather than silently ignored.
func noBody(c echo.Context) error {
	if c.Request().ContentLength == 0 {
		return nil
	}
	var empty struct{}
	return bind(c, &empty)
}

func bind(c echo.Context, v any) error {
	ct := c.Request().Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
			Message: "the request body must be JSON", Hint: "Send Content-Type: application/json."}
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON object")
	}
	if err == nil {
		if _, rerr := dec.Token(); rerr != io.EOF {
			err = errors.New("trailing data after the JSON object")
		}
	}
	if err == nil {
		return nil
	}
	var tooBig *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooBig):
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge)
	case errors.As(err, &typeErr):
		return badRequest(typeErr.Field, typeErr.Field+" has the wrong type", "Check the field types against /api/v1/openapi.json.")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return badRequest(field, "unknown field "+quote(field), "Send only the documented fields.")
	case errors.Is(err, io.EOF):
		return &Error{Status: http.StatusBadRequest, Code: "bad_request", Message: "the request body is empty", Hint: "Send a JSON object."}
	}
	return &Error{Status: http.StatusBadRequest, Code: "bad_request", Message: "malformed JSON", Hint: "Send one JSON object.", Err: err}
}
