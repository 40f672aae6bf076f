package registry_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

func TestCredentialPrerequisites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, item string
		want       string // a rule, or "" for a credential prerequisite read
	}{
		{"a credential", "  - credential: {issuer: did:web:a.example, achievement: https://a.example/evaluations/poaw}\n", ""},
		{"no credential key", "  - {issuer: did:web:a.example}\n", "field-unknown"},
		{"not did:web", "  - credential: {issuer: did:key:z6Mk, achievement: https://a.example/e}\n", "field-type"},
		{"a relative achievement", "  - credential: {issuer: did:web:a.example, achievement: /evaluations/poaw}\n", "field-type"},
		{"no achievement", "  - credential: {issuer: did:web:a.example}\n", "field-required"},
		{"an extra key", "  - credential: {issuer: did:web:a.example, achievement: https://a.example/e, level: 2}\n", "field-unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(validSIP, "author: Ada\n", "prerequisites:\n"+tc.item+"author: Ada\n", 1)
			d := registry.Parse("evaluations/SIP-2.md", []byte(src))
			var rules []string
			for _, p := range d.Problems {
				rules = append(rules, p.Rule)
			}
			switch {
			case tc.want == "" && (len(rules) > 0 || d.SIP == nil || len(d.SIP.CredentialPrerequisites) != 1):
				t.Errorf("problems %v, SIP %+v", rules, d.SIP)
			case tc.want != "" && !strings.Contains(strings.Join(rules, " "), tc.want):
				t.Errorf("problems %v, want %s", rules, tc.want)
			}
		})
	}
}
