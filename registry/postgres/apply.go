package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
)

// Apply writes a sync plan in one transaction. Syncs from any number of
// replicas queue on an advisory lock, and the plan applies only on top of
// the generation it was computed from.
func (s *Store) Apply(ctx context.Context, p *registry.Plan) (err error) {
	defer wrap(&err, "Apply")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	// Syncs from every replica queue on one advisory lock per schema.
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('sip-sync:' || current_schema(), 0))"); err != nil {
		return err
	}
	var generation int64
	switch err := tx.QueryRow(ctx, "SELECT generation FROM sync_state WHERE id = 1").Scan(&generation); {
	case err == pgx.ErrNoRows:
	case err != nil:
		return err
	}
	if generation != p.BaseGeneration {
		return fmt.Errorf("registry moved from generation %d to %d: %w", p.BaseGeneration, generation, registry.ErrConflict)
	}

	batch := &pgx.Batch{}
	for _, c := range p.Added {
		vals, err := entryValues(c.Entry)
		if err != nil {
			return err
		}
		batch.Queue(`INSERT INTO sips (id, sip, name, module, type, status, version, points, author, handler,
			description, created_at, updated_at, path, body, definition, raw_config, content_sha256)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
			append([]any{c.Entry.ID}, vals...)...)
	}
	for _, c := range p.Changed {
		vals, err := entryValues(c.Entry)
		if err != nil {
			return err
		}
		batch.Queue(`UPDATE sips SET sip = $2, name = $3, module = $4, type = $5, status = $6, version = $7,
			points = $8, author = $9, handler = $10, description = $11, created_at = $12, updated_at = $13, path = $14,
			body = $15, definition = $16, raw_config = $17, content_sha256 = $18, removed = false WHERE id = $1`,
			append([]any{c.Entry.ID}, vals...)...)
	}
	// Prerequisites after every SIP of the plan exists, so their foreign
	// keys can point at SIPs added in the same sync.
	changes := append(append([]*registry.Change{}, p.Added...), p.Changed...)
	for _, c := range changes {
		batch.Queue("DELETE FROM sip_prerequisites WHERE sip_id = $1", c.Entry.ID)
		for i, pre := range c.Entry.Prerequisites {
			batch.Queue("INSERT INTO sip_prerequisites (sip_id, prerequisite_id, position) VALUES ($1, $2, $3)", c.Entry.ID, pre, i)
		}
		if c.NewVersion {
			batch.Queue(`WITH v AS (
					INSERT INTO sip_versions (sip_id, version, content_sha256, commit_sha, synced_at, content)
					VALUES ($1, $2, $3, $4, $5, $6) RETURNING id)
				UPDATE sips SET current_version_id = (SELECT id FROM v) WHERE id = $1`,
				c.Entry.ID, c.Entry.Version, c.Entry.ContentSHA256, p.Commit, p.At, c.Content)
		}
	}
	for _, id := range p.Deprecated {
		batch.Queue("UPDATE sips SET removed = true, status = 'deprecated' WHERE id = $1", id)
	}
	next := generation + 1
	batch.Queue(`INSERT INTO sync_state (id, generation, commit_sha, source, synced_at) VALUES (1, $1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET generation = excluded.generation, commit_sha = excluded.commit_sha,
			source = excluded.source, synced_at = excluded.synced_at`, next, p.Commit, p.Source, p.At)
	batch.Queue(`INSERT INTO syncs (generation, commit_sha, source, synced_at, added, changed, deprecated)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, next, p.Commit, p.Source, p.At, len(p.Added), len(p.Changed), len(p.Deprecated))
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return err
	}
	if err := s.notifySync(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	s.syncCache.forget()
	return nil
}

// entryValues are the columns $2… shared by insert and update.
func entryValues(e *registry.Entry) ([]any, error) {
	def, err := json.Marshal(e.SIP)
	if err != nil {
		return nil, err
	}
	var raw []byte
	if e.RawConfig != nil {
		if raw, err = json.Marshal(e.RawConfig); err != nil {
			return nil, err
		}
	}
	return []any{e.Number, e.Name, e.Module, string(e.Type), string(e.Status), e.Version, e.Points, e.Author,
		e.Handler, e.Description, e.CreatedAt, e.UpdatedAt, e.Path, e.Body, def, raw, e.ContentSHA256}, nil
}
