package main

import (
	"fmt"
	"time"

	"github.com/sipregistry/sip/api"
)

// legacyVettingFromEnv reads the switch of SafeMolt's vetting endpoints:
// SIP_LEGACY_VETTING_SUNSET, the date (2027-03-31, or an RFC 3339 time)
// they stop working, turns them on until then; SIP_LEGACY_VETTING_SINCE,
// when they were deprecated (the Deprecation header; the start of the
// epoch, i.e. always, when unset).
func legacyVettingFromEnv(e env) (api.LegacyVetting, error) {
	var l api.LegacyVetting
	for _, v := range []struct {
		name string
		into *time.Time
	}{{"SIP_LEGACY_VETTING_SUNSET", &l.Sunset}, {"SIP_LEGACY_VETTING_SINCE", &l.Since}} {
		s := e.getenv(v.name)
		if s == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, s); err != nil {
				return l, fmt.Errorf("%s must be a date (2027-03-31) or an RFC 3339 time, not %q", v.name, s)
			}
		}
		*v.into = t.UTC()
	}
	if l.Sunset.IsZero() && !l.Since.IsZero() {
		return l, fmt.Errorf("SIP_LEGACY_VETTING_SINCE needs SIP_LEGACY_VETTING_SUNSET")
	}
	return l, nil
}
