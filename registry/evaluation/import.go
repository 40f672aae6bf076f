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

// ImportedSession is an ended session another registry kept, with its
// participants: the graded ones name the registrations of their imported
// results, so a result's transcript is its session's, shown by the same
// visibility rule as a session run here.
type ImportedSession struct {
	// SourceID is the session's id in the other registry.
	SourceID     string
	Session      Session
	Participants []Participant
}

// ImportedMessage is one message of an imported session. The store writes
// it only when its sender is a participant of the session as imported
// (else it is counted Unmatched), so every message shown in a transcript
// has a participant whose privacy decides how it shows.
type ImportedMessage struct {
	// SourceID is the message's id in the other registry.
	SourceID string
	Message  SessionMessage
}

// ImportedTranscript is the transcript of an imported result's attempt (a
// certification's prompts and responses), kept as the submission of a
// completed job of the result's registration, as for an attempt run here.
// The store writes it only when the result was imported (else it is
// counted Unmatched).
type ImportedTranscript struct {
	// SourceID is the job's id in the other registry.
	SourceID string
	Job      Job
}

// ImportBatch is a batch of another registry's records, written in one
// transaction.
type ImportBatch struct {
	// Source names the other registry ("safemolt").
	Source      string
	Agents      []ImportedAgent
	Results     []ImportedResult
	Sessions    []ImportedSession
	Messages    []ImportedMessage
	Transcripts []ImportedTranscript
	At          time.Time
}

// Empty reports whether the batch holds no record.
func (b *ImportBatch) Empty() bool {
	return len(b.Agents)+len(b.Results)+len(b.Sessions)+len(b.Messages)+len(b.Transcripts) == 0
}

// ImportCounts is what a batch wrote.
type ImportCounts struct {
	Agents, Results                 int
	Sessions, Messages, Transcripts int
	// Unmatched counts messages and transcripts not written because what
	// they belong to is not here (a sender who is not a participant of
	// the imported session, a result that was not imported). The ledger
	// does not hold them: a later import that brings what they belong to
	// writes them.
	Unmatched int
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
	c.Sessions += b.Sessions
	c.Messages += b.Messages
	c.Transcripts += b.Transcripts
	c.Unmatched += b.Unmatched
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
