package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestLegacyVettingFromEnv(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		vars          map[string]string
		sunset, since time.Time
		bad           bool
	}{
		{"off", nil, time.Time{}, time.Time{}, false},
		{"a date", map[string]string{"SIP_LEGACY_VETTING_SUNSET": "2027-03-31"}, time.Date(2027, 3, 31, 0, 0, 0, 0, time.UTC), time.Time{}, false},
		{"a time and since", map[string]string{"SIP_LEGACY_VETTING_SUNSET": "2027-03-31T12:00:00+02:00", "SIP_LEGACY_VETTING_SINCE": "2026-12-01"},
			time.Date(2027, 3, 31, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), false},
		{"not a date", map[string]string{"SIP_LEGACY_VETTING_SUNSET": "soon"}, time.Time{}, time.Time{}, true},
		{"since alone", map[string]string{"SIP_LEGACY_VETTING_SINCE": "2026-12-01"}, time.Time{}, time.Time{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := env{getenv: func(k string) string { return tt.vars[k] }}
			got, err := legacyVettingFromEnv(e)
			if (err != nil) != tt.bad {
				t.Errorf("got err = %v, want an error: %v", err, tt.bad)
				return
			}
			if !tt.bad && (!got.Sunset.Equal(tt.sunset) || !got.Since.Equal(tt.since)) {
				t.Errorf("got %+v, want sunset %v since %v", got, tt.sunset, tt.since)
			}
		})
	}
	// sip serve refuses a bad date before it starts.
	var out, errOut bytes.Buffer
	e := env{stdout: &out, stderr: &errOut, getenv: func(k string) string {
		if k == "SIP_LEGACY_VETTING_SUNSET" {
			return "next spring"
		}
		return ""
	}}
	if code := run(context.Background(), e, []string{"serve", "--db", t.TempDir() + "/x.db"}); code != exitConfig || !strings.Contains(errOut.String(), "SIP_LEGACY_VETTING_SUNSET") {
		t.Errorf("serve with a bad sunset: exit %d, %s", code, errOut.String())
	}
}
