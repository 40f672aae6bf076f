package registry

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// Page sizes of result listings.
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
)

// PageSize clamps a requested page size.
func PageSize(n int) int {
	if n <= 0 {
		return DefaultPageSize
	}
	return min(n, MaxPageSize)
}

// EncodeCursor makes the opaque cursor that continues a listing after the
// result completed at at with id.
func EncodeCursor(at time.Time, id string) string {
	return base64URL(at.UTC().Format(time.RFC3339Nano) + "|" + id)
}

// DecodeCursor reads a cursor. Returns ErrInvalid for anything else.
func DecodeCursor(c string) (time.Time, string, error) {
	raw, err := unbase64URL(c)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("cursor: %w", ErrInvalid)
	}
	ts, id, ok := strings.Cut(raw, "|")
	at, err := time.Parse(time.RFC3339Nano, ts)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", fmt.Errorf("cursor: %w", ErrInvalid)
	}
	return at, id, nil
}

func base64URL(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func unbase64URL(s string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return string(b), err
}
