package registry

import "context"

// CatalogStore is what the catalogue reads of the registry database.
type CatalogStore interface {
	SyncState(ctx context.Context) (SyncState, error)
	Entries(ctx context.Context, f EntryFilter) ([]*Entry, error)
	Versions(ctx context.Context, id string) ([]Version, error)
	Content(ctx context.Context, id string) ([]byte, error)
	Ping(ctx context.Context) error
}

// Catalog is the registry as its readers see it: where it is (the last
// applied sync), the SIPs it holds, their versions and stored files.
// cmd/sip builds it over the store and hands it to the API, which keeps
// what it read per sync generation and asks State on every request.
type Catalog struct {
	store CatalogStore
}

// NewCatalog reads the registry from st.
func NewCatalog(st CatalogStore) *Catalog { return &Catalog{store: st} }

// State is the last applied sync (zero before the first). Both stores
// answer from memory until another sync is applied (SQLite while its
// WAL-index header shows no new commit, PostgreSQL while LISTEN brings no
// sync notification), so readers may ask on every request.
func (c *Catalog) State(ctx context.Context) (SyncState, error) { return c.store.SyncState(ctx) }

// Entries lists every SIP the registry holds, removed ones included, in
// number order.
func (c *Catalog) Entries(ctx context.Context) ([]*Entry, error) {
	return c.store.Entries(ctx, EntryFilter{IncludeRemoved: true})
}

// Versions lists a SIP's versions, oldest first. Returns ErrNotFound for
// an unknown id.
func (c *Catalog) Versions(ctx context.Context, id string) ([]Version, error) {
	return c.store.Versions(ctx, id)
}

// File returns the stored file of a SIP's current version. Returns
// ErrNotFound.
func (c *Catalog) File(ctx context.Context, id string) ([]byte, error) {
	return c.store.Content(ctx, id)
}

// Reachable reports whether the registry's database answers. Returns
// ErrUnavailable when it does not.
func (c *Catalog) Reachable(ctx context.Context) error { return c.store.Ping(ctx) }
