package evaluation

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/credential"
)

// ErrNoCredential is a result that has no credential: it did not pass.
var ErrNoCredential = errors.New("only a passing result has a credential")

// Links are the public URLs a credential points to.
type Links struct {
	Credential, Result, Trace, Agent, Evaluation string
}

// Pass is what the credential of a passing result says, read from the
// definition of the version the result was graded under: the one place
// a pass becomes an Open Badges achievement.
func (s *Service) Pass(ctx context.Context, r *Result, agent *registry.Agent, links Links) (credential.Pass, error) {
	if r.EndedAs() != OutcomePassed || !r.Credentialed() {
		return credential.Pass{}, ErrNoCredential
	}
	def, err := s.defs.pinned(ctx, r.EvaluationID, r.VersionID, nil)
	if err != nil {
		return credential.Pass{}, fmt.Errorf("the definition result %s was graded under: %w", r.ID, err)
	}
	p := credential.Pass{
		CredentialURL: links.Credential, ResultURL: links.Result, TraceURL: links.Trace,
		Agent: agent.Name, AgentURL: links.Agent, EvaluationURL: links.Evaluation,
		EvaluationID: def.ID, Number: def.Number, Name: def.Name, Description: def.Description,
		Version: r.Version, ContentSHA256: r.ContentSHA256, PassedAt: r.CompletedAt, ExpiresAt: r.ExpiresAt,
		Criteria: criteria(def),
	}
	if prov := r.Of(); prov != ProvenanceGraded {
		// Only imported passes get here (Credentialed): the credential
		// says, signed, that another registry graded the attempt.
		p.Provenance = string(prov)
		p.ProvenanceSource, _ = r.Details["source"].(string)
	}
	// A credential is read by anyone it is shown to: it carries a score
	// only of an evaluation whose scores are public.
	if r.Score != nil && r.MaxScore != nil && *r.MaxScore > 0 && registry.ScoresPublic(&def.SIP) {
		pct, hundred := *r.Score / *r.MaxScore * 100, 100.0
		p.Score, p.MaxScore = &pct, &hundred
		if ps, ok := passingScore(def); ok {
			p.PassingScore = &ps
		}
	}
	return p, nil
}

// passingScore is the percentage a definition needs, when it scores.
func passingScore(def *Definition) (float64, bool) {
	switch c := def.Config; {
	case c.Benchmark != nil:
		return c.Benchmark.PassingScore, true
	case c.Certification != nil:
		return c.Certification.PassingScore, true
	}
	return 0, false
}

// criteria says in words how the evaluation is passed.
func criteria(def *Definition) string {
	if ps, ok := passingScore(def); ok {
		return fmt.Sprintf("Score at least %g%% in SIP-%d %s, version %s, as the SIP defines it.", ps, def.Number, def.Name, def.Version)
	}
	return fmt.Sprintf("Pass SIP-%d %s, version %s, as the SIP defines it.", def.Number, def.Name, def.Version)
}

// CredentialChecker checks a recorded external credential again: its
// signature, validity window and status list, fetched fresh or from a
// short cache (a list that cannot be fetched fails).
type CredentialChecker interface {
	Recheck(ctx context.Context, raw []byte) error
}

// heldCredentials are the agent's external credentials that meet a
// prerequisite now, keyed by issuer and achievement: recorded, not
// expired, and passing the checker again.
// why says, for a recorded credential that does not count now, why.
func (s *Service) heldCredentials(ctx context.Context, agentID string, want []registry.CredentialPrerequisite) (held map[registry.CredentialPrerequisite]bool, why []string, _ error) {
	held = map[registry.CredentialPrerequisite]bool{}
	if len(want) == 0 || s.credentials == nil {
		return held, nil, nil
	}
	recorded, err := s.presented.ExternalCredentials(ctx, agentID)
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	for _, c := range recorded {
		key := registry.CredentialPrerequisite{Issuer: c.Issuer, Achievement: c.Achievement}
		if !slices.Contains(want, key) {
			continue
		}
		if !c.ValidUntil.IsZero() && !now.Before(c.ValidUntil) {
			why = append(why, "your credential of "+c.Achievement+" expired")
			continue
		}
		if err := s.credentials.Recheck(ctx, c.Credential); err != nil {
			// Revoked, or its status cannot be read now: not held.
			why = append(why, "your credential of "+c.Achievement+" does not verify now ("+err.Error()+")")
			continue
		}
		held[key] = true
	}
	return held, why, nil
}

// MissingCredentials is the prerequisite rule for credentials: those of
// want the agent holds no valid credential of, named by their
// achievement.
func MissingCredentials(want []registry.CredentialPrerequisite, held map[registry.CredentialPrerequisite]bool) []string {
	var missing []string
	for _, w := range want {
		if !held[w] {
			missing = append(missing, w.Achievement)
		}
	}
	return missing
}

// RevokeResult revokes one of the agent's own results: it no longer
// counts as a pass, and its credential reads as revoked in the status
// list. reason, at most 500 bytes, is the agent's.
func (s *Service) RevokeResult(ctx context.Context, agentID, resultID, reason string) (*Result, error) {
	r, err := s.results.Result(ctx, resultID)
	if errors.Is(err, registry.ErrNotFound) || (err == nil && r.AgentID != agentID) {
		return nil, notFound("no such result of yours", "An agent revokes only its own results.")
	}
	if err != nil {
		return nil, err
	}
	if len(reason) > 500 {
		return nil, invalid("reason", "reason is at most 500 characters", "Say briefly why.")
	}
	why := "revoked by its agent"
	if reason != "" {
		why += ": " + reason
	}
	if err := s.revocations.RevokeResult(ctx, r.ID, why, s.now()); err != nil {
		return nil, err
	}
	return s.results.Result(ctx, r.ID)
}
