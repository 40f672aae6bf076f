package evaluation

import (
	"fmt"

	"github.com/sipregistry/sip/registry"
)

// Provenance is where a result comes from, and so what it may do.
type Provenance string

// Provenances. Results this registry records itself are graded; the
// others come from an import of another registry.
const (
	// ProvenanceGraded: this registry graded the attempt.
	ProvenanceGraded Provenance = "graded"
	// ProvenanceImported: another registry graded the attempt, and its
	// evidence (its result record) came along.
	ProvenanceImported Provenance = "imported"
	// ProvenanceBackfilled: another registry asserted the result without
	// evidence of any attempt (a backfill from a flag on the agent).
	ProvenanceBackfilled Provenance = "backfilled"
	// ProvenanceProvisioned: another registry gave the result to an agent
	// its operator provisioned, without any attempt.
	ProvenanceProvisioned Provenance = "provisioned"
)

// Provenances lists every provenance, in order of the evidence behind it.
var Provenances = []Provenance{ProvenanceGraded, ProvenanceImported, ProvenanceBackfilled, ProvenanceProvisioned}

// ProvenanceDetails are the keys of a result's details that say where
// another registry's record came from (an import writes them): shown
// with the result whoever may see it, score or not.
var ProvenanceDetails = []string{"source", "source_result_id", "source_version", "version_held"}

// Of is the provenance of r ("" is graded: a result recorded before
// provenance was kept is this registry's own).
func (r *Result) Of() Provenance {
	if r.Provenance == "" {
		return ProvenanceGraded
	}
	return r.Provenance
}

// Evidenced reports whether an attempt was graded, here or by another
// registry whose record came along. Only an evidenced pass meets
// prerequisites, earns points and a credential, and counts in statistics
// and leaderboards by default; a backfilled or provisioned pass is shown,
// labelled, and the agent takes the evaluation here to hold it.
func (p Provenance) Evidenced() bool {
	return p == "" || p == ProvenanceGraded || p == ProvenanceImported
}

// Credentialed reports whether a pass of this provenance earns a
// credential: it is evidenced, and the definition it was graded under is
// one this registry holds (an imported result under a version it never
// held names no content hash, and a credential must name one).
func (r *Result) Credentialed() bool {
	return r.Of().Evidenced() && r.ContentSHA256 != ""
}

// ParseProvenance checks a provenance named by a client. Returns an error
// wrapping registry.ErrInvalid for anything else.
func ParseProvenance(s string) (Provenance, error) {
	for _, p := range Provenances {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("provenance %q is not one of graded, imported, backfilled, provisioned: %w", s, registry.ErrInvalid)
}
