package evaluation

import (
	"context"
	"time"

	"github.com/sipregistry/sip/registry"
)

// ImportedAgent is an agent another registry kept, as this one keeps it.
type ImportedAgent struct {
	// SourceID is the agent's id in the other registry.
	SourceID string
	Agent    registry.Agent
	// FallbackName is the name the agent takes when Agent.Name is taken
	// (names are unique ignoring case here, and were not everywhere).
	FallbackName string
}

// ImportedResult is a result another registry recorded, with the
// completed registration it ends.
type ImportedResult struct {
	// SourceID is the result's id in the other registry.
	SourceID     string
	Registration Registration
	Result       Result
	// Points is what the result earns if it is the agent's first result
	// of the evaluation to earn points here (the store credits them once,
	// as for a graded pass).
	Points float64
}

// ImportBatch is a batch of another registry's records, written in one
// transaction.
type ImportBatch struct {
	// Source names the other registry ("safemolt").
	Source  string
	Agents  []ImportedAgent
	Results []ImportedResult
	At      time.Time
}

// ImportCounts is what a batch wrote.
type ImportCounts struct {
	Agents, Results int
	// Skipped counts records an earlier (or a concurrent) import wrote.
	Skipped int
	// Renamed counts agents that took their fallback name.
	Renamed int
	// Credited counts results that earned points.
	Credited int
}

// Add adds b to c.
func (c *ImportCounts) Add(b ImportCounts) {
	c.Agents += b.Agents
	c.Results += b.Results
	c.Skipped += b.Skipped
	c.Renamed += b.Renamed
	c.Credited += b.Credited
}

// VersionRef is one version row of a SIP, as an import matches results
// to versions.
type VersionRef struct {
	EvaluationID  string
	VersionID     int64
	Version       string
	ContentSHA256 string
	Handler       string
	Points        float64
	// Current marks the SIP's current version.
	Current bool
}

// ImportStore writes imports. Implemented by the stores of
// registry/sqlite and registry/postgres.
type ImportStore interface {
	// ImportBatch writes a batch in one transaction. A record whose
	// source id the import ledger holds for b.Source is skipped, so a
	// batch written twice, or by two imports at once, is written once.
	ImportBatch(ctx context.Context, b *ImportBatch) (ImportCounts, error)
	// ImportVersions lists every SIP's version rows, oldest first.
	ImportVersions(ctx context.Context) ([]VersionRef, error)
}
