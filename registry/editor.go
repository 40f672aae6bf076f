package registry

import (
	"context"
	"fmt"
	"time"
)

// ErrDraftLimit is a new draft past a person's number of drafts.
var ErrDraftLimit = fmt.Errorf("the limit of drafts is reached: %w", ErrForbidden)

// EditorSession is a browser's session with the contribution editor: a
// person signed in with GitHub (Login, their token sealed), or, before
// that, a sign-in under way (no Login; Token holds the editor's form the
// sign-in carries, sealed, if any). It is found by the
// SHA-256 of the random value the browser holds, never by the value.
type EditorSession struct {
	IDHash    string
	Login     string
	Token     []byte // the GitHub user token, encrypted (never the plain text); a sign-in's form, encrypted
	CreatedAt time.Time
	ExpiresAt time.Time
}

// EditorDraft is a SIP file a signed-in person saved to come back to.
type EditorDraft struct {
	ID        string
	Login     string
	Title     string
	Mode      string // how the editor shows it: "fields" or "file"
	Edit      string // the SIP it changes ("SIP-2"), empty for a new one
	Content   string // the form, as the editor posts it (URL-encoded)
	CreatedAt time.Time
	UpdatedAt time.Time
}

// EditorStore keeps the contribution editor's sessions and drafts.
type EditorStore interface {
	// CreateEditorSession stores a session. Returns ErrConflict when its
	// IDHash exists.
	CreateEditorSession(ctx context.Context, s EditorSession) error
	// EditorSession returns the session, unless it expired by now.
	// Returns ErrNotFound.
	EditorSession(ctx context.Context, idHash string, now time.Time) (EditorSession, error)
	// TakeEditorSession deletes the session and returns it, unless it
	// expired by now: of concurrent callers one gets it. Returns
	// ErrNotFound.
	TakeEditorSession(ctx context.Context, idHash string, now time.Time) (EditorSession, error)
	// DeleteEditorSessions deletes the session, and every session that
	// expired by now.
	DeleteEditorSessions(ctx context.Context, idHash string, now time.Time) error
	// SaveEditorDraft stores a new draft, or replaces the content of the
	// person's draft with its id. A new draft past the person's max
	// drafts returns ErrDraftLimit and stores nothing.
	SaveEditorDraft(ctx context.Context, d EditorDraft, max int) error
	// EditorDrafts lists a person's drafts, most recently saved first.
	EditorDrafts(ctx context.Context, login string) ([]EditorDraft, error)
	// EditorDraft returns a person's draft. Returns ErrNotFound (another
	// person's draft too).
	EditorDraft(ctx context.Context, login, id string) (EditorDraft, error)
	// DeleteEditorDraft deletes a person's draft. Returns ErrNotFound.
	DeleteEditorDraft(ctx context.Context, login, id string) error
}
