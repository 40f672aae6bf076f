package proposal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/sipregistry/sip/registry"
)

// Draft is a saved editor form of a signed-in person.
type Draft = registry.EditorDraft

// SaveDraft saves the form of the session's person: a new draft when id
// is empty (within MaxDrafts), else theirs with that id. It returns the
// draft's id.
func (s *Service) SaveDraft(ctx context.Context, session string, d Draft) (string, error) {
	login, err := s.Person(ctx, session)
	if err != nil {
		return "", err
	}
	return s.saveDraft(ctx, login, d)
}

// saveDraft saves a draft of login's.
func (s *Service) saveDraft(ctx context.Context, login string, d Draft) (string, error) {
	if n := len(d.Content) + len(d.Title); n > s.cfg.MaxDraftBytes {
		return "", fmt.Errorf("the draft is %d bytes, over the limit of %d: %w", n, s.cfg.MaxDraftBytes, registry.ErrTooLarge)
	}
	now := s.cfg.Now()
	d.Login, d.UpdatedAt, d.CreatedAt = login, now, now
	if d.ID == "" {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		d.ID = hex.EncodeToString(b)
	} else if _, err := s.cfg.Store.EditorDraft(ctx, login, d.ID); err != nil {
		return "", err // another person's, or deleted
	}
	if err := s.cfg.Store.SaveEditorDraft(ctx, d, s.cfg.MaxDrafts); err != nil {
		return "", err
	}
	return d.ID, nil
}

// MaxDrafts is how many drafts a person keeps.
func (s *Service) MaxDrafts() int { return s.cfg.MaxDrafts }

// Drafts lists the session's person's drafts, newest first.
func (s *Service) Drafts(ctx context.Context, session string) ([]Draft, error) {
	login, err := s.Person(ctx, session)
	if err != nil {
		return nil, err
	}
	return s.cfg.Store.EditorDrafts(ctx, login)
}

// Draft is one of the session's person's drafts.
func (s *Service) Draft(ctx context.Context, session, id string) (Draft, error) {
	login, err := s.Person(ctx, session)
	if err != nil {
		return Draft{}, err
	}
	return s.cfg.Store.EditorDraft(ctx, login, id)
}

// DeleteDraft deletes one of the session's person's drafts.
func (s *Service) DeleteDraft(ctx context.Context, session, id string) error {
	login, err := s.Person(ctx, session)
	if err != nil {
		return err
	}
	return s.cfg.Store.DeleteEditorDraft(ctx, login, id)
}
