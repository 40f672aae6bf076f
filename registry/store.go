package registry

import (
	"context"
	"time"
)

// Entry is a SIP as the registry holds it: the definition, where it came
// from, and the version it is at.
type Entry struct {
	SIP
	Path          string         `json:"path"`
	Body          string         `json:"body_markdown"`
	RawConfig     map[string]any `json:"raw_config,omitempty"`
	ContentSHA256 string         `json:"content_sha256"`
	// Removed is set when the SIP's file disappeared from the source. The
	// entry is kept (results refer to it) with status deprecated.
	Removed bool `json:"removed"`
	// Current is the current version row.
	Current Version `json:"current_version"`
}

// Version is one recorded state of a SIP: a row is added whenever a sync
// sees new content. Rows are never changed or deleted, so whatever was
// done under a version can always name it.
type Version struct {
	ID            int64     `json:"id"`
	SIPID         string    `json:"sip_id"`
	Version       string    `json:"version"`
	ContentSHA256 string    `json:"content_sha256"`
	CommitSHA     string    `json:"commit_sha"` // empty when synced from a folder
	SyncedAt      time.Time `json:"synced_at"`
}

// SyncState is where the registry is: the last applied sync.
type SyncState struct {
	// Generation counts applied syncs; a plan applies only on top of the
	// generation it was computed from.
	Generation int64
	CommitSHA  string
	Source     string
	SyncedAt   time.Time
}

// Head is the little a sync needs to know of an entry to plan on it.
type Head struct {
	ID            string
	Number        int
	Path          string
	ContentSHA256 string
	Type          Type
	Status        Status
	Removed       bool
	Prerequisites []string
}

// EntryFilter selects entries. Zero values select everything that has not
// been removed.
type EntryFilter struct {
	Module         string
	Types          []Type   // empty: any
	Statuses       []Status // empty: any
	EvaluationOnly bool     // leave out process SIPs
	IncludeRemoved bool
}

// Store is the registry database. Implementations: registry/sqlite (the
// embedded default) and registry/postgres; registrytest holds the suite
// both must pass.
type Store interface {
	// Entries lists entries in SIP number order.
	Entries(ctx context.Context, f EntryFilter) ([]*Entry, error)
	// Entry returns the entry with the given id. Returns ErrNotFound.
	Entry(ctx context.Context, id string) (*Entry, error)
	// EntryByNumber returns the entry with the given SIP number. Returns
	// ErrNotFound.
	EntryByNumber(ctx context.Context, n int) (*Entry, error)
	// Versions lists an entry's versions, oldest first. Returns
	// ErrNotFound when the id is unknown.
	Versions(ctx context.Context, id string) ([]Version, error)
	// Heads lists every entry, removed ones included, with only the fields
	// a sync plans on (cheaper than Entries).
	Heads(ctx context.Context) ([]Head, error)
	// Content returns the file content of an entry's current version.
	// Returns ErrNotFound.
	Content(ctx context.Context, id string) ([]byte, error)
	// SyncState returns the last applied sync (zero before the first).
	SyncState(ctx context.Context) (SyncState, error)
	// Apply writes a plan in one transaction. Returns ErrConflict, and
	// writes nothing, when another sync was applied since the plan's
	// BaseGeneration.
	Apply(ctx context.Context, p *Plan) error
	// Ping reports whether the database answers. Returns ErrUnavailable.
	Ping(ctx context.Context) error
	Close() error
}

// SecretStore keeps secrets the server makes for itself, such as the key
// of the digests in execution records.
type SecretStore interface {
	// Secret returns the secret called name, storing candidate (at least
	// 32 bytes) first when there is none: concurrent callers, on any
	// replica, get the same secret.
	Secret(ctx context.Context, name string, candidate []byte) ([]byte, error)
}
