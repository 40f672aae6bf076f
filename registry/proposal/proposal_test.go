package proposal_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/proposal"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// github is a GitHub that knows one code and one person.
type github struct{ token string }

func (g *github) AuthorizeURL(state, redirectURI string) string {
	return "https://github.example/authorize?state=" + state
}
func (g *github) Exchange(_ context.Context, code, _ string) (string, error) {
	if code != "good" {
		return "", errors.New("bad code")
	}
	return g.token, nil
}
func (g *github) Login(context.Context, string) (string, error) { return "ada", nil }
func (g *github) Open(context.Context, string, proposal.Change) (proposal.Opened, error) {
	return proposal.Opened{}, nil
}
func (g *github) Claimed(context.Context, string, string, string, string) (map[int]string, error) {
	return nil, nil
}
func (g *github) Status(context.Context, string, string, string, int) (proposal.Status, error) {
	return proposal.Status{}, nil
}

// TestSignInOnceAndSealed: a sign-in's state is taken once and expires;
// the token is stored sealed for its own session only; a key of the
// wrong size is refused.
func TestSignInOnceAndSealed(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	now := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	gh := &github{token: "ghu_secret_token_value"}
	cfg := proposal.Config{Store: st, GitHub: gh, Key: bytes.Repeat([]byte{1}, 32), Owner: "o", Repo: "r", Now: func() time.Time { return now }}
	svc, err := proposal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bad := cfg
	bad.Key = []byte("short")
	if _, err := proposal.New(bad); err == nil {
		t.Error("a 5-byte key was taken")
	}
	ctx := t.Context()
	state, _, err := svc.BeginSignIn(ctx, "https://registry.example/contribute/callback", proposal.Draft{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := svc.FinishSignIn(ctx, state, "good", "")
	if err != nil || in.Login != "ada" || in.Form != nil {
		t.Fatalf("FinishSignIn = %+v, %v", in, err)
	}
	session := in.Session
	if _, err := svc.FinishSignIn(ctx, state, "good", ""); !errors.Is(err, proposal.ErrSignIn) {
		t.Errorf("a state used twice: %v, want ErrSignIn", err)
	}
	late, _, _ := svc.BeginSignIn(ctx, "", proposal.Draft{})
	now = now.Add(proposal.DefaultSignInTTL)
	if _, err := svc.FinishSignIn(ctx, late, "good", ""); !errors.Is(err, proposal.ErrSignIn) {
		t.Errorf("a state past its time: %v, want ErrSignIn", err)
	}
	if p, err := svc.Person(ctx, session); err != nil || p != "ada" {
		t.Errorf("Person = %q, %v", p, err)
	}
	other, err := proposal.New(proposal.Config{Store: st, GitHub: gh, Key: bytes.Repeat([]byte{2}, 32), Owner: "o", Repo: "r", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.PullStatus(ctx, session, 1); !errors.Is(err, registry.ErrUnauthorized) {
		t.Errorf("a token sealed under another key: %v, want ErrUnauthorized", err)
	}
	if _, err := svc.PullStatus(ctx, session, 1); err != nil {
		t.Errorf("the token under its own key: %v", err)
	}
	if _, err := svc.Person(ctx, state); !errors.Is(err, proposal.ErrSignedOut) {
		t.Errorf("a sign-in's state as a session: %v, want ErrSignedOut", err)
	}
	now = now.Add(proposal.DefaultSessionTTL)
	if _, err := svc.Person(ctx, session); !errors.Is(err, proposal.ErrSignedOut) {
		t.Errorf("an expired session: %v, want ErrSignedOut", err)
	}
}

// TestSignInCarriesTheForm: a sign-in keeps the editor's form sealed in
// its own row, within the size of a draft; finishing it saves the form as
// the person's draft (a new one when the id it carried is not theirs); a
// second finish, or another key, restores nothing.
func TestSignInCarriesTheForm(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	now := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	cfg := proposal.Config{Store: st, GitHub: &github{token: "ghu_t"}, Key: bytes.Repeat([]byte{1}, 32), Owner: "o", Repo: "r",
		Now: func() time.Time { return now }, MaxDraftBytes: 1000}
	svc, err := proposal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, _, err := svc.BeginSignIn(ctx, "", proposal.Draft{Title: "Big", Content: strings.Repeat("x", 1001)}); !errors.Is(err, registry.ErrTooLarge) {
		t.Errorf("a form over the draft limit: %v, want ErrTooLarge", err)
	}
	form := proposal.Draft{ID: "someone-elses", Title: "Greeting", Mode: "fields", Content: "name=Secret+greeting&mode=fields"}
	state, _, err := svc.BeginSignIn(ctx, "", form)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(state))
	row, err := st.EditorSession(ctx, hex.EncodeToString(sum[:]), now)
	if err != nil || len(row.Token) == 0 || bytes.Contains(row.Token, []byte("Secret")) {
		t.Errorf("the sign-in's row: %v, token %q; want the form sealed", err, row.Token)
	}
	other, err := proposal.New(proposal.Config{Store: st, GitHub: &github{token: "ghu_t"}, Key: bytes.Repeat([]byte{2}, 32), Owner: "o", Repo: "r", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	rotated, _, err := svc.BeginSignIn(ctx, "", form)
	if err != nil {
		t.Fatal(err)
	}
	if in, err := other.FinishSignIn(ctx, rotated, "good", ""); !errors.Is(err, proposal.ErrSignIn) || in.Form != nil {
		t.Errorf("a form sealed under another key: %+v, %v; want ErrSignIn", in, err)
	}
	in, err := svc.FinishSignIn(ctx, state, "good", "")
	if err != nil || in.Form == nil || in.Form.ID == "" || in.Form.ID == form.ID || in.NotSaved != nil {
		t.Fatalf("FinishSignIn = %+v, %v; want the form saved as a new draft", in, err)
	}
	d, err := svc.Draft(ctx, in.Session, in.Form.ID)
	if err != nil || d.Content != form.Content || d.Title != "Greeting" || d.Login != "ada" {
		t.Errorf("the draft = %+v, %v", d, err)
	}
	if in, err := svc.FinishSignIn(ctx, state, "good", ""); !errors.Is(err, proposal.ErrSignIn) || in.Form != nil {
		t.Errorf("a replayed sign-in: %+v, %v; want ErrSignIn", in, err)
	}
	if ds, err := svc.Drafts(ctx, in.Session); err != nil || len(ds) != 1 {
		t.Errorf("drafts after a replay: %d, %v; want 1", len(ds), err)
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", true},
		{strings.Repeat("ab", 32), true},
		{"hunter2", false},
		{strings.Repeat("ab", 16), false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			k, err := proposal.ParseKey(tc.in)
			if (err == nil) != tc.ok || tc.ok && len(k) != 32 {
				t.Errorf("got %d bytes, %v; want ok %v", len(k), err, tc.ok)
			}
			if err != nil && strings.Contains(err.Error(), tc.in) {
				t.Errorf("got an error repeating the key: %v; want it unrepeated", err)
			}
		})
	}
}
