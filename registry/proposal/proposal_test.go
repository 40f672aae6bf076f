package proposal_test

import (
	"bytes"
	"context"
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
