package registrytest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
)

// RunEditorStoreTests runs the contribution editor's half of the
// conformance suite: sessions (a sign-in taken once) and drafts (per
// person, within a limit).
func RunEditorStoreTests(t *testing.T, open func(t *testing.T) registry.EditorStore) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, registry.EditorStore)
	}{
		{"SessionsExpire", testEditorSessions},
		{"SessionTakenOnce", testEditorSessionTakenOnce},
		{"DraftsPerPerson", testEditorDrafts},
		{"DraftLimitUnderConcurrency", testEditorDraftLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

func testEditorSessions(t *testing.T, s registry.EditorStore) {
	ctx := t.Context()
	es := registry.EditorSession{IDHash: "h1", Login: "ada", Token: []byte{0, 1, 2, 250}, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	if err := s.CreateEditorSession(ctx, es); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateEditorSession(ctx, es); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("the same session twice: got %v, want ErrConflict", err)
	}
	got, err := s.EditorSession(ctx, "h1", t0.Add(time.Minute))
	if err != nil || got.Login != "ada" || string(got.Token) != string(es.Token) || !got.ExpiresAt.Equal(es.ExpiresAt) || !got.CreatedAt.Equal(t0) {
		t.Errorf("EditorSession = %+v, %v; want %+v", got, err, es)
	}
	if _, err := s.EditorSession(ctx, "h1", t0.Add(time.Hour)); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("an expired session: got %v, want ErrNotFound", err)
	}
	if _, err := s.EditorSession(ctx, "other", t0); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("an unknown session: got %v, want ErrNotFound", err)
	}
	old := registry.EditorSession{IDHash: "h0", CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)}
	if err := s.CreateEditorSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteEditorSessions(ctx, "h1", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"h0", "h1"} {
		if _, err := s.EditorSession(ctx, h, t0); !errors.Is(err, registry.ErrNotFound) {
			t.Errorf("%s after DeleteEditorSessions: got %v, want ErrNotFound", h, err)
		}
	}
}

func testEditorSessionTakenOnce(t *testing.T, s registry.EditorStore) {
	ctx := t.Context()
	if err := s.CreateEditorSession(ctx, registry.EditorSession{IDHash: "state", CreatedAt: t0, ExpiresAt: t0.Add(10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.TakeEditorSession(ctx, "state", t0)
			switch {
			case err == nil:
				mu.Lock()
				taken++
				mu.Unlock()
			case !errors.Is(err, registry.ErrNotFound):
				t.Errorf("TakeEditorSession: %v", err)
			}
		}()
	}
	wg.Wait()
	if taken != 1 {
		t.Errorf("a session was taken %d times, want once", taken)
	}
	if err := s.CreateEditorSession(ctx, registry.EditorSession{IDHash: "late", CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TakeEditorSession(ctx, "late", t0.Add(time.Minute)); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("taking an expired session: got %v, want ErrNotFound", err)
	}
}

func testEditorDrafts(t *testing.T, s registry.EditorStore) {
	ctx := t.Context()
	d := registry.EditorDraft{ID: "d1", Login: "ada", Title: "Greeting", Mode: "fields", Content: "id=greeting", CreatedAt: t0, UpdatedAt: t0}
	if err := s.SaveEditorDraft(ctx, d, 2); err != nil {
		t.Fatal(err)
	}
	d2 := registry.EditorDraft{ID: "d2", Login: "ada", Title: "SIP-2", Mode: "file", Edit: "SIP-2", Content: "file=x", CreatedAt: t0, UpdatedAt: t0.Add(time.Minute)}
	if err := s.SaveEditorDraft(ctx, d2, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveEditorDraft(ctx, registry.EditorDraft{ID: "d3", Login: "ada", CreatedAt: t0, UpdatedAt: t0}, 2); !errors.Is(err, registry.ErrDraftLimit) {
		t.Errorf("a third draft with a limit of 2: got %v, want ErrDraftLimit", err)
	}
	// Replacing one is not a new one.
	d.Content, d.UpdatedAt = "id=greeting2", t0.Add(2*time.Minute)
	if err := s.SaveEditorDraft(ctx, d, 2); err != nil {
		t.Errorf("replacing a draft at the limit: %v", err)
	}
	// Another person's id is not theirs to replace.
	if err := s.SaveEditorDraft(ctx, registry.EditorDraft{ID: "d1", Login: "eve", Content: "stolen", CreatedAt: t0, UpdatedAt: t0}, 2); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("another person's draft id: got %v, want ErrConflict", err)
	}
	list, err := s.EditorDrafts(ctx, "ada")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "d1" || list[0].Content != "id=greeting2" || list[1].Edit != "SIP-2" || !list[1].UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("EditorDrafts = %+v", list)
	}
	if list, _ := s.EditorDrafts(ctx, "eve"); len(list) != 0 {
		t.Errorf("eve's drafts: %+v, want none", list)
	}
	if _, err := s.EditorDraft(ctx, "eve", "d1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("another person's draft: got %v, want ErrNotFound", err)
	}
	if err := s.DeleteEditorDraft(ctx, "eve", "d1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("deleting another person's draft: got %v, want ErrNotFound", err)
	}
	if err := s.DeleteEditorDraft(ctx, "ada", "d1"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.EditorDraft(ctx, "ada", "d2"); err != nil || got.Title != "SIP-2" || got.Mode != "file" {
		t.Errorf("EditorDraft d2 = %+v, %v", got, err)
	}
}

func testEditorDraftLimit(t *testing.T, s registry.EditorStore) {
	ctx := t.Context()
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.SaveEditorDraft(ctx, registry.EditorDraft{ID: fmt.Sprint("c", i), Login: "ada", CreatedAt: t0, UpdatedAt: t0}, 3)
			if err != nil && !errors.Is(err, registry.ErrDraftLimit) {
				t.Errorf("SaveEditorDraft: %v", err)
			}
		}()
	}
	wg.Wait()
	if list, _ := s.EditorDrafts(ctx, "ada"); len(list) != 3 {
		t.Errorf("%d drafts saved at once with a limit of 3, want 3", len(list))
	}
}
