package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

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

// bind decodes a JSON request body into v, strictly: the content type must
// be JSON, unknown fields and trailing data are refused, the size cap of
// the middleware applies, and no string may hold a NUL character (no store
// keeps one: PostgreSQL refuses it in text).
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
		if field, ok := nulField(reflect.ValueOf(v), ""); ok {
			return badRequest(field, field+" contains a NUL character", "Remove the \\u0000 characters.")
		}
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

// nulField finds a string holding a NUL character in a decoded request and
// names its field (dotted, by JSON name; map keys and list indexes too).
func nulField(v reflect.Value, at string) (string, bool) {
	join := func(name string) string {
		if at == "" {
			return name
		}
		return at + "." + name
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "", false
		}
		return nulField(v.Elem(), at)
	case reflect.String:
		return at, strings.ContainsRune(v.String(), 0)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" {
				name = t.Field(i).Name
			}
			if f, ok := nulField(v.Field(i), join(name)); ok {
				return f, true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if f, ok := nulField(v.Index(i), join(strconv.Itoa(i))); ok {
				return f, true
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			key := fmt.Sprint(iter.Key().Interface())
			if strings.ContainsRune(key, 0) {
				return join(strings.ReplaceAll(key, "\x00", "\\u0000")), true
			}
			if f, ok := nulField(iter.Value(), join(key)); ok {
				return f, true
			}
		}
	}
	return "", false
}
