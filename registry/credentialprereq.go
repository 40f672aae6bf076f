package registry

import (
	"net/url"
	"slices"
	"strings"

	"github.com/sipregistry/sip/registry/internal/yaml"
)

// CredentialPrerequisite is a prerequisite met by a credential another
// registry issued (an Open Badges credential, verified by its signature
// and its issuer's status list): the issuer's did:web identifier and the
// achievement, the evaluation's page on that registry.
type CredentialPrerequisite struct {
	Issuer      string `json:"issuer"`
	Achievement string `json:"achievement"`
}

// credentialPrerequisite reads a prerequisites item written as
// {credential: {issuer: did:web:…, achievement: https://…}}.
func (d *decoder) credentialPrerequisite(item *yaml.Node, at name) (CredentialPrerequisite, bool) {
	o, ok := d.object(item, at, 1)
	if !ok {
		return CredentialPrerequisite{}, false
	}
	o.unknown([]string{"credential"}, SeverityError)
	v := o.get("credential")
	if v == nil {
		d.ps.errorf("field-type", d.span(item), "Write `- credential: {issuer: did:web:…, achievement: https://…}`, or an evaluation id.",
			"%s is a map without `credential`", describe(at))
		return CredentialPrerequisite{}, false
	}
	inner := name{parent: &at, key: "credential", index: -1}
	c, ok := d.object(v, inner, 2)
	if !ok {
		return CredentialPrerequisite{}, false
	}
	c.unknown([]string{"issuer", "achievement"}, SeverityError)
	var p CredentialPrerequisite
	for _, f := range []struct {
		key string
		dst *string
	}{{"issuer", &p.Issuer}, {"achievement", &p.Achievement}} {
		n := c.get(f.key)
		if n == nil {
			d.ps.errorf("field-required", d.span(v), "Name the credential's `issuer` (did:web:…) and `achievement` (its URL).",
				"%s.%s is missing", describe(inner), f.key)
			return CredentialPrerequisite{}, false
		}
		s, ok := d.str(n, name{parent: &inner, key: f.key, index: -1})
		if !ok {
			return CredentialPrerequisite{}, false
		}
		*f.dst = strings.TrimSpace(s)
	}
	if !strings.HasPrefix(p.Issuer, "did:web:") || len(p.Issuer) == len("did:web:") {
		d.ps.errorf("field-type", d.span(c.get("issuer")), "Write the issuing registry's did:web identifier, e.g. did:web:registry.example.",
			"issuer %q is not a did:web identifier", p.Issuer)
		return CredentialPrerequisite{}, false
	}
	if u, err := url.Parse(p.Achievement); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		d.ps.errorf("field-type", d.span(c.get("achievement")), "Write the achievement's URL, the evaluation's page on the issuing registry.",
			"achievement %q is not an absolute URL", p.Achievement)
		return CredentialPrerequisite{}, false
	}
	return p, true
}

// untrustedIssuers reports credential prerequisites whose issuer the
// repository's policy does not trust (Options.TrustedIssuers).
func untrustedIssuers(d *Document, trusted []string) []Problem {
	if d.SIP == nil || trusted == nil {
		return nil
	}
	var out []Problem
	for i, p := range d.SIP.CredentialPrerequisites {
		if !slices.Contains(trusted, p.Issuer) {
			at := d.Span("prerequisites")
			if i < len(d.credAt) {
				at = d.credAt[i]
			}
			out = append(out, problemAt(d, at, SeverityError, "credential-issuer-untrusted",
				"Add the issuer to `trusted_issuers` in .github/sip.yml (reviewed by an admin), or require a local evaluation.",
				"issuer %s is not trusted by this repository's policy", p.Issuer))
		}
	}
	return out
}
