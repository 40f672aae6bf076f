package credential

import (
	"strconv"
	"time"
)

// Pass is what a credential says of one passing result.
type Pass struct {
	CredentialURL string // the credential's own id
	ResultURL     string // the result's page (evidence)
	TraceURL      string // its execution record (evidence)
	Agent         string // the agent's name
	AgentURL      string // the agent's page: the credential's subject

	EvaluationURL string // the evaluation's page: the achievement's id
	EvaluationID  string
	Number        int
	Name          string
	Description   string
	Criteria      string // how the evaluation is passed, in words
	Version       string
	ContentSHA256 string

	// Status is the credential's entry in the issuer's status list
	// (Entry); without one the credential cannot be revoked.
	Status map[string]any

	// Provenance is where the pass comes from when this registry did not
	// grade it ("imported": another registry graded it and its record came
	// along); "" for a pass graded here. A credential of a pass this
	// registry did not grade says so in a signed field of its subject.
	Provenance string
	// ProvenanceSource names the registry that graded it ("safemolt").
	ProvenanceSource string

	Score, MaxScore, PassingScore *float64
	PassedAt                      time.Time
	ExpiresAt                     time.Time // zero: the pass does not expire
}

// Badge is the unsigned OpenBadgeCredential (Open Badges 3.0 on the
// Verifiable Credentials 2.0 data model) for a pass, issued by i. It is a
// function of the pass alone, so the same pass always gives the same
// credential.
func (i *Issuer) Badge(p Pass) map[string]any {
	humanCode := "SIP-" + strconv.Itoa(p.Number)
	achievement := map[string]any{
		"id":              p.EvaluationURL,
		"type":            []any{"Achievement"},
		"name":            p.Name,
		"description":     orDefault(p.Description, p.Name),
		"criteria":        map[string]any{"id": p.EvaluationURL, "narrative": orDefault(p.Criteria, "Pass the evaluation "+humanCode+".")},
		"version":         p.Version,
		"humanCode":       humanCode,
		"achievementType": "Assessment",
		"otherIdentifier": []any{
			map[string]any{"type": []any{"IdentifierEntry"}, "identifier": p.EvaluationID, "identifierType": "identifier"},
			map[string]any{"type": []any{"IdentifierEntry"}, "identifier": "sha256:" + p.ContentSHA256, "identifierType": "ext:ContentSHA256"},
		},
	}
	subject := map[string]any{
		"id":          p.AgentURL,
		"type":        []any{"AchievementSubject"},
		"achievement": achievement,
	}
	if p.Score != nil {
		desc := map[string]any{"id": p.EvaluationURL + "#score", "type": []any{"ResultDescription"}, "name": "Score", "resultType": "ScaledScore"}
		if p.PassingScore != nil {
			desc["requiredValue"] = number(*p.PassingScore)
		}
		if p.MaxScore != nil {
			desc["valueMax"] = number(*p.MaxScore)
		}
		achievement["resultDescription"] = []any{desc}
		subject["result"] = []any{map[string]any{"type": []any{"Result"}, "resultDescription": desc["id"], "value": number(*p.Score)}}
	}
	contexts := []any{ContextVC, ContextOB}
	description := p.Agent + " passed " + humanCode + ", " + p.Name + ", version " + p.Version + "."
	if p.Provenance != "" {
		contexts = append(contexts, ContextCredential)
		subject["provenance"] = p.Provenance
		if p.ProvenanceSource != "" {
			subject["provenanceSource"] = p.ProvenanceSource
		}
		description += " Another registry (" + orDefault(p.ProvenanceSource, "unnamed") + ") graded the attempt; this registry " + p.Provenance + " its record."
	}
	c := map[string]any{
		"@context": contexts,
		"id":       p.CredentialURL,
		"type":     []any{"VerifiableCredential", "OpenBadgeCredential"},
		"issuer": map[string]any{"id": i.DID, "type": []any{"Profile"}, "name": i.Name, "url": i.URL,
			"description": "A registry of evaluations of AI agents, defined as SIPs."},
		"name":              p.Name + " (" + humanCode + " " + p.Version + ")",
		"description":       description,
		"validFrom":         p.PassedAt.UTC().Format(time.RFC3339),
		"credentialSubject": subject,
		"evidence": []any{
			map[string]any{"id": p.ResultURL, "type": []any{"Evidence"}, "name": "The result"},
			map[string]any{"id": p.TraceURL, "type": []any{"Evidence"}, "name": "The execution record of the attempt"},
		},
	}
	if !p.ExpiresAt.IsZero() {
		c["validUntil"] = p.ExpiresAt.UTC().Format(time.RFC3339)
	}
	if p.Status != nil {
		c["credentialStatus"] = p.Status
	}
	return c
}

// Issue signs the badge of a pass. The proof is dated when the pass was
// recorded: Ed25519 is deterministic, so the same pass and key always
// give the same bytes, wherever and however often it is downloaded, and
// a credential signed once is kept (signedcache.go).
func (i *Issuer) Issue(p Pass) (map[string]any, error) {
	return signedCredentials.sign(i.Signer(), i.Badge(p), p.PassedAt)
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
