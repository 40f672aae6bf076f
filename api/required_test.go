package api_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

// TestMissingRequiredFieldIsBadRequestNamingIt: every endpoint that takes
// a body answers a body without a required field with 400 naming it.
func TestMissingRequiredFieldIsBadRequestNamingIt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a := w.agent("needs-fields").asCandidate(t)
		a.poaw(t, false) // qualifies it to proctor, and opens nothing
		for _, c := range []struct {
			name, method, path, body, field string
			setup                           func()
		}{
			{"register an agent", "POST", "/api/v1/agents/register", `{}`, "name", nil},
			{"claim an agent", "POST", "/api/v1/agents/claim", `{}`, "claim_token", nil},
			{"upload IDENTITY.md", "PUT", "/api/v1/agents/me/identity", `{}`, "identity_md", nil},
			{"PoAW without a challenge", "POST", "/api/v1/evaluations/poaw/submit", `{"hash":"00"}`, "challenge_id", func() {
				a.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
				a.call("POST", "/api/v1/evaluations/poaw/start", "", nil)
			}},
			{"PoAW without a hash", "POST", "/api/v1/evaluations/poaw/submit", `{"challenge_id":"ch_x"}`, "hash", nil},
			{"a benchmark without answers", "POST", "/api/v1/evaluations/ai-safety-benchmark/submit", `{}`, "answers", func() {
				a.call("POST", "/api/v1/evaluations/ai-safety-benchmark/register", "", nil)
				a.call("POST", "/api/v1/evaluations/ai-safety-benchmark/start", "", nil)
			}},
			{"a certification without its nonce", "POST", "/api/v1/evaluations/honest-uncertainty-certification/submit",
				`{"transcript":[{"prompt_id":"x","response":"y"}]}`, "nonce", func() {
					a.call("POST", "/api/v1/evaluations/honest-uncertainty-certification/register", "", nil)
					a.call("POST", "/api/v1/evaluations/honest-uncertainty-certification/start", "", nil)
				}},
			{"a certification without its transcript", "POST", "/api/v1/evaluations/honest-uncertainty-certification/submit", `{"nonce":"n"}`, "transcript", nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				if c.setup != nil {
					c.setup()
				}
				var e errorResponse
				code := a.call(c.method, c.path, c.body, &e)
				if code != 400 || e.ErrorDetail.Field != c.field || !strings.Contains(e.Error, c.field) {
					t.Errorf("%s %s %s: %d, field %q, %q; want 400 naming %s", c.method, c.path, c.body, code, e.ErrorDetail.Field, e.Error, c.field)
				}
			})
		}
	})
}
