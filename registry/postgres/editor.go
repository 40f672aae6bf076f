package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sipregistry/sip/registry"
)

var _ registry.EditorStore = (*Store)(nil)

// CreateEditorSession stores a session.
func (s *Store) CreateEditorSession(ctx context.Context, es registry.EditorSession) (err error) {
	defer wrap(&err, "CreateEditorSession")
	_, err = s.pool.Exec(ctx, "INSERT INTO editor_sessions (id_hash, login, token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)",
		es.IDHash, es.Login, es.Token, es.CreatedAt, es.ExpiresAt)
	return err
}

func scanEditorSession(r pgx.Row) (registry.EditorSession, error) {
	var es registry.EditorSession
	err := r.Scan(&es.IDHash, &es.Login, &es.Token, &es.CreatedAt, &es.ExpiresAt)
	es.CreatedAt, es.ExpiresAt = es.CreatedAt.UTC(), es.ExpiresAt.UTC()
	return es, err
}

// EditorSession returns a session that has not expired.
func (s *Store) EditorSession(ctx context.Context, idHash string, now time.Time) (_ registry.EditorSession, err error) {
	defer wrap(&err, "EditorSession")
	return scanEditorSession(s.pool.QueryRow(ctx,
		"SELECT id_hash, login, token, created_at, expires_at FROM editor_sessions WHERE id_hash = $1 AND expires_at > $2", idHash, now))
}

// TakeEditorSession deletes a session that has not expired and returns it.
func (s *Store) TakeEditorSession(ctx context.Context, idHash string, now time.Time) (_ registry.EditorSession, err error) {
	defer wrap(&err, "TakeEditorSession")
	return scanEditorSession(s.pool.QueryRow(ctx,
		"DELETE FROM editor_sessions WHERE id_hash = $1 AND expires_at > $2 RETURNING id_hash, login, token, created_at, expires_at", idHash, now))
}

// DeleteEditorSessions deletes a session and the expired ones.
func (s *Store) DeleteEditorSessions(ctx context.Context, idHash string, now time.Time) (err error) {
	defer wrap(&err, "DeleteEditorSessions")
	_, err = s.pool.Exec(ctx, "DELETE FROM editor_sessions WHERE id_hash = $1 OR expires_at <= $2", idHash, now)
	return err
}

// SaveEditorDraft stores a new draft (within max per person) or replaces
// the person's draft with its id. A person's saves queue on an advisory
// lock, so that two at once cannot both pass the limit.
func (s *Store) SaveEditorDraft(ctx context.Context, d registry.EditorDraft, max int) (err error) {
	defer wrap(&err, "SaveEditorDraft")
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('sip-drafts:' || $1, 0))", d.Login); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "UPDATE editor_drafts SET title = $1, mode = $2, edit = $3, content = $4, updated_at = $5 WHERE id = $6 AND login = $7",
			d.Title, d.Mode, d.Edit, d.Content, d.UpdatedAt, d.ID, d.Login)
		if err != nil || tag.RowsAffected() > 0 {
			return err
		}
		var count int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM editor_drafts WHERE login = $1", d.Login).Scan(&count); err != nil {
			return err
		}
		if count >= max {
			return registry.ErrDraftLimit
		}
		_, err = tx.Exec(ctx, "INSERT INTO editor_drafts (id, login, title, mode, edit, content, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
			d.ID, d.Login, d.Title, d.Mode, d.Edit, d.Content, d.CreatedAt, d.UpdatedAt)
		return err
	})
}

const editorDraftColumns = "id, login, title, mode, edit, content, created_at, updated_at"

func scanEditorDraft(r pgx.Row) (registry.EditorDraft, error) {
	var d registry.EditorDraft
	err := r.Scan(&d.ID, &d.Login, &d.Title, &d.Mode, &d.Edit, &d.Content, &d.CreatedAt, &d.UpdatedAt)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, err
}

// EditorDrafts lists a person's drafts, newest first.
func (s *Store) EditorDrafts(ctx context.Context, login string) (_ []registry.EditorDraft, err error) {
	defer wrap(&err, "EditorDrafts")
	rows, err := s.pool.Query(ctx, "SELECT "+editorDraftColumns+" FROM editor_drafts WHERE login = $1 ORDER BY updated_at DESC, id", login)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []registry.EditorDraft{}
	for rows.Next() {
		d, err := scanEditorDraft(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// EditorDraft returns a person's draft.
func (s *Store) EditorDraft(ctx context.Context, login, id string) (_ registry.EditorDraft, err error) {
	defer wrap(&err, "EditorDraft")
	return scanEditorDraft(s.pool.QueryRow(ctx, "SELECT "+editorDraftColumns+" FROM editor_drafts WHERE login = $1 AND id = $2", login, id))
}

// DeleteEditorDraft deletes a person's draft.
func (s *Store) DeleteEditorDraft(ctx context.Context, login, id string) (err error) {
	defer wrap(&err, "DeleteEditorDraft")
	tag, err := s.pool.Exec(ctx, "DELETE FROM editor_drafts WHERE login = $1 AND id = $2", login, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return registry.ErrNotFound
	}
	return nil
}
