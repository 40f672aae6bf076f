package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/sipregistry/sip/registry"
)

// Apply writes a sync plan in one transaction.
func (s *Store) Apply(ctx context.Context, p *registry.Plan) (err error) {
	defer wrap(&err, "Apply")
	tx, done, err := s.begin(ctx) // BEGIN IMMEDIATE: syncs queue here
	if err != nil {
		return err
	}
	defer done()

	var generation int64
	switch err := tx.QueryRowContext(ctx, "SELECT generation FROM sync_state WHERE id = 1").Scan(&generation); {
	case err == sql.ErrNoRows:
	case err != nil:
		return err
	}
	if generation != p.BaseGeneration {
		return fmt.Errorf("registry moved from generation %d to %d: %w", p.BaseGeneration, generation, registry.ErrConflict)
	}
	at := formatTime(p.At)
	changes := append(append([]*registry.Change{}, p.Added...), p.Changed...)
	for _, c := range p.Added {
		if err := insertEntry(ctx, tx, c.Entry); err != nil {
			return err
		}
	}
	for _, c := range p.Changed {
		if err := updateEntry(ctx, tx, c.Entry); err != nil {
			return err
		}
	}
	// Prerequisites once every SIP of the plan exists, so their foreign
	// keys can point at SIPs added in the same sync.
	for _, c := range changes {
		if err := replacePrerequisites(ctx, tx, c.Entry); err != nil {
			return err
		}
		if !c.NewVersion {
			continue
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO sip_versions (sip_id, version, content_sha256, commit_sha, synced_at, content)
			VALUES (?, ?, ?, ?, ?, ?)`, c.Entry.ID, c.Entry.Version, c.Entry.ContentSHA256, p.Commit, at, c.Content)
		if err != nil {
			return err
		}
		vid, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE sips SET current_version_id = ? WHERE id = ?", vid, c.Entry.ID); err != nil {
			return err
		}
	}
	for _, id := range p.Deprecated {
		if _, err := tx.ExecContext(ctx, "UPDATE sips SET removed = 1, status = 'deprecated' WHERE id = ?", id); err != nil {
			return err
		}
	}
	next := generation + 1
	if _, err := tx.ExecContext(ctx, `INSERT INTO sync_state (id, generation, commit_sha, source, synced_at) VALUES (1, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET generation = excluded.generation, commit_sha = excluded.commit_sha,
			source = excluded.source, synced_at = excluded.synced_at`, next, p.Commit, p.Source, at); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO syncs (generation, commit_sha, source, synced_at, added, changed, deprecated)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, next, p.Commit, p.Source, at, len(p.Added), len(p.Changed), len(p.Deprecated)); err != nil {
		return err
	}
	return tx.Commit()
}

// entryValues are the columns shared by insert and update, in order.
func entryValues(e *registry.Entry) ([]any, error) {
	def, err := json.Marshal(e.SIP)
	if err != nil {
		return nil, err
	}
	var raw any
	if e.RawConfig != nil {
		b, err := json.Marshal(e.RawConfig)
		if err != nil {
			return nil, err
		}
		raw = string(b)
	}
	return []any{e.Number, e.Name, e.Module, string(e.Type), string(e.Status), e.Version, e.Points, e.Author,
		e.Handler, e.Description, formatTime(e.CreatedAt), formatTime(e.UpdatedAt), e.Path, e.Body, string(def), raw,
		e.ContentSHA256}, nil
}

func insertEntry(ctx context.Context, tx *sql.Tx, e *registry.Entry) error {
	vals, err := entryValues(e)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO sips (id, sip, name, module, type, status, version, points, author, handler,
		description, created_at, updated_at, path, body, definition, raw_config, content_sha256)
		VALUES (`+placeholders(18)+`)`, append([]any{e.ID}, vals...)...)
	return err
}

func updateEntry(ctx context.Context, tx *sql.Tx, e *registry.Entry) error {
	vals, err := entryValues(e)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE sips SET sip = ?, name = ?, module = ?, type = ?, status = ?, version = ?,
		points = ?, author = ?, handler = ?, description = ?, created_at = ?, updated_at = ?, path = ?, body = ?,
		definition = ?, raw_config = ?, content_sha256 = ?, removed = 0 WHERE id = ?`, append(vals, e.ID)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("update %s: %d rows: %w", e.ID, n, registry.ErrConflict)
	}
	return nil
}

func replacePrerequisites(ctx context.Context, tx *sql.Tx, e *registry.Entry) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM sip_prerequisites WHERE sip_id = ?", e.ID); err != nil {
		return err
	}
	for i, p := range e.Prerequisites {
		if _, err := tx.ExecContext(ctx, "INSERT INTO sip_prerequisites (sip_id, prerequisite_id, position) VALUES (?, ?, ?)",
			e.ID, p, i); err != nil {
			return err
		}
	}
	return nil
}
