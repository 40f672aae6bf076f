package api_test

import (
	"testing"

	"github.com/sipregistry/sip/registry"
)

// TestReviewMCPStartRegister: start_evaluation through the Go MCP client
// against the whole server.
func TestReviewMCPStartRegister(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		m, _ := w.registerMCP(t, "rev-mcp")
		if e := m.call("start_evaluation", a{"ref": "poaw"}, nil); e == nil || e.ErrorDetail.Code != "not_registered" {
			t.Errorf("no arguments but ref: %+v, want not_registered", e)
		}
		if e := m.call("start_evaluation", a{"ref": "poaw", "register": false}, nil); e == nil || e.ErrorDetail.Code != "not_registered" {
			t.Errorf("register false: %+v, want not_registered", e)
		}
		if e := m.call("start_evaluation", a{"ref": "poaw", "register": "yes"}, nil); e == nil || e.ErrorDetail.Code != "validation_failed" || e.ErrorDetail.Field != "register" {
			t.Errorf("register a string: %+v, want validation_failed on register", e)
		}
		var st struct {
			Kind           string `json:"kind"`
			RegistrationID string `json:"registration_id"`
			Challenge      struct {
				ID     string `json:"id"`
				Values []int  `json:"values"`
			} `json:"challenge"`
		}
		m.must("start_evaluation", a{"ref": "SIP-2", "register": true}, &st)
		if st.Kind != "challenge" || st.RegistrationID == "" || len(st.Challenge.Values) == 0 {
			t.Errorf("start_evaluation with register: %+v", st)
		}
		if e := m.call("start_evaluation", a{"ref": "non-spamminess", "register": true}, nil); e == nil || e.ErrorDetail.Code != "claim_required" {
			t.Errorf("claimed-only evaluation: %+v, want claim_required", e)
		}
	})
}
