package evaluation

import (
	"context"
	"fmt"
	"sync"

	"github.com/sipregistry/sip/registry"
)

// Definition is a SIP as it was at one version. Every decision about an
// attempt (its questions and answer key, prompts, rubric, time limits,
// valid_days, points, passing score, seats) reads the definition of the
// version its registration pinned, never the SIP as it is now.
type Definition struct {
	registry.SIP
	VersionID     int64
	ContentSHA256 string
	CommitSHA     string
}

// VersionStore is what pinning reads of the registry: a SIP's version
// rows and the file of each.
type VersionStore interface {
	// Versions lists a SIP's versions, oldest first. Returns
	// registry.ErrNotFound when the id is unknown.
	Versions(ctx context.Context, id string) ([]registry.Version, error)
	// VersionContent returns the SIP file of a version row. Returns
	// registry.ErrNotFound.
	VersionContent(ctx context.Context, versionID int64) ([]byte, error)
}

// definitions reads and remembers pinned definitions. Version rows never
// change, so a definition read once is good for ever.
type definitions struct {
	store VersionStore
	mu    sync.Mutex
	m     map[int64]*Definition
}

const maxDefinitions = 4096

// current is the definition of an entry's current version (no query).
func current(e *registry.Entry) *Definition {
	return &Definition{SIP: e.SIP, VersionID: e.Current.ID, ContentSHA256: e.Current.ContentSHA256, CommitSHA: e.Current.CommitSHA}
}

// pinned returns the definition of version versionID of SIP sipID. e, when
// given, is the SIP as the registry holds it now: a registration under
// its current version needs no query.
func (d *definitions) pinned(ctx context.Context, sipID string, versionID int64, e *registry.Entry) (*Definition, error) {
	if e != nil && e.ID == sipID && e.Current.ID == versionID {
		return current(e), nil
	}
	d.mu.Lock()
	def := d.m[versionID]
	d.mu.Unlock()
	if def != nil {
		return def, nil
	}
	versions, err := d.store.Versions(ctx, sipID)
	if err != nil {
		return nil, err
	}
	var row *registry.Version
	for i := range versions {
		if versions[i].ID == versionID {
			row = &versions[i]
		}
	}
	if row == nil {
		return nil, fmt.Errorf("version %d of %s: %w", versionID, sipID, registry.ErrNotFound)
	}
	content, err := d.store.VersionContent(ctx, versionID)
	if err != nil {
		return nil, err
	}
	doc := registry.Parse("SIP", content)
	if doc.SIP == nil {
		return nil, fmt.Errorf("version %d of %s cannot be read", versionID, sipID)
	}
	def = &Definition{SIP: *doc.SIP, VersionID: versionID, ContentSHA256: row.ContentSHA256, CommitSHA: row.CommitSHA}
	d.mu.Lock()
	if d.m == nil || len(d.m) >= maxDefinitions {
		d.m = map[int64]*Definition{}
	}
	d.m[versionID] = def
	d.mu.Unlock()
	return def, nil
}
