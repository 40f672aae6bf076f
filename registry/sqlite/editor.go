package sqlite

import (
	"context"
	"time"

	"github.com/sipregistry/sip/registry"
)

var _ registry.EditorStore = (*Store)(nil)

// CreateEditorSession stores a session.
func (s *Store) CreateEditorSession(ctx context.Context, es registry.EditorSession) (err error) {
	defer wrap(&err, "CreateEditorSession")
	_, err = s.exec(ctx, "INSERT INTO editor_sessions (id_hash, login, token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
		es.IDHash, es.Login, es.Token, formatTime(es.CreatedAt), formatTime(es.ExpiresAt))
	return err
}

func scanEditorSession(r scanner) (registry.EditorSession, error) {
	var es registry.EditorSession
	var created, expires string
	if err := r.Scan(&es.IDHash, &es.Login, &es.Token, &created, &expires); err != nil {
		return es, err
	}
	var err error
	if es.CreatedAt, err = parseTime(created); err != nil {
		return es, err
	}
	es.ExpiresAt, err = parseTime(expires)
	return es, err
}

// EditorSession returns a session that has not expired.
func (s *Store) EditorSession(ctx context.Context, idHash string, now time.Time) (_ registry.EditorSession, err error) {
	defer wrap(&err, "EditorSession")
	return scanEditorSession(s.queryRow(ctx, "SELECT id_hash, login, token, created_at, expires_at FROM editor_sessions WHERE id_hash = ? AND expires_at > ?",
		idHash, formatTime(now)))
}

// TakeEditorSession deletes a session that has not expired and returns it.
func (s *Store) TakeEditorSession(ctx context.Context, idHash string, now time.Time) (_ registry.EditorSession, err error) {
	defer wrap(&err, "TakeEditorSession")
	row, unlock := s.writeRow(ctx, "DELETE FROM editor_sessions WHERE id_hash = ? AND expires_at > ? RETURNING id_hash, login, token, created_at, expires_at",
		idHash, formatTime(now))
	defer unlock()
	return scanEditorSession(row)
}

// DeleteEditorSessions deletes a session and the expired ones.
func (s *Store) DeleteEditorSessions(ctx context.Context, idHash string, now time.Time) (err error) {
	defer wrap(&err, "DeleteEditorSessions")
	_, err = s.exec(ctx, "DELETE FROM editor_sessions WHERE id_hash = ? OR expires_at <= ?", idHash, formatTime(now))
	return err
}

// SaveEditorDraft stores a new draft (within max per person) or replaces
// the person's draft with its id.
func (s *Store) SaveEditorDraft(ctx context.Context, d registry.EditorDraft, max int) (err error) {
	defer wrap(&err, "SaveEditorDraft")
	tx, done, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := s.txExec(ctx, tx, "UPDATE editor_drafts SET title = ?, mode = ?, edit = ?, content = ?, updated_at = ? WHERE id = ? AND login = ?",
		d.Title, d.Mode, d.Edit, d.Content, formatTime(d.UpdatedAt), d.ID, d.Login)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var count int
		if err := s.txQueryRow(ctx, tx, "SELECT count(*) FROM editor_drafts WHERE login = ?", d.Login).Scan(&count); err != nil {
			return err
		}
		if count >= max {
			return registry.ErrDraftLimit
		}
		if _, err := s.txExec(ctx, tx, "INSERT INTO editor_drafts (id, login, title, mode, edit, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			d.ID, d.Login, d.Title, d.Mode, d.Edit, d.Content, formatTime(d.CreatedAt), formatTime(d.UpdatedAt)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

const editorDraftColumns = "id, login, title, mode, edit, content, created_at, updated_at"

func scanEditorDraft(r scanner) (registry.EditorDraft, error) {
	var d registry.EditorDraft
	var created, updated string
	if err := r.Scan(&d.ID, &d.Login, &d.Title, &d.Mode, &d.Edit, &d.Content, &created, &updated); err != nil {
		return d, err
	}
	var err error
	if d.CreatedAt, err = parseTime(created); err != nil {
		return d, err
	}
	d.UpdatedAt, err = parseTime(updated)
	return d, err
}

// EditorDrafts lists a person's drafts, newest first.
func (s *Store) EditorDrafts(ctx context.Context, login string) (_ []registry.EditorDraft, err error) {
	defer wrap(&err, "EditorDrafts")
	rows, err := s.query(ctx, "SELECT "+editorDraftColumns+" FROM editor_drafts WHERE login = ? ORDER BY updated_at DESC, id", login)
	return collect(rows, err, scanEditorDraft)
}

// EditorDraft returns a person's draft.
func (s *Store) EditorDraft(ctx context.Context, login, id string) (_ registry.EditorDraft, err error) {
	defer wrap(&err, "EditorDraft")
	return scanEditorDraft(s.queryRow(ctx, "SELECT "+editorDraftColumns+" FROM editor_drafts WHERE login = ? AND id = ?", login, id))
}

// DeleteEditorDraft deletes a person's draft.
func (s *Store) DeleteEditorDraft(ctx context.Context, login, id string) (err error) {
	defer wrap(&err, "DeleteEditorDraft")
	res, err := s.exec(ctx, "DELETE FROM editor_drafts WHERE login = ? AND id = ?", login, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return registry.ErrNotFound
	}
	return nil
}
