package evaluation_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// posts is a fake X: posts by URL, each with its author and text.
type posts map[string][2]string

func (p posts) ReadPost(_ context.Context, url string) (string, string, error) {
	post, ok := p[url]
	if !ok {
		return "", "", errors.New("X cannot show this post")
	}
	return post[0], post[1], nil
}

func refusalCode(err error) string {
	var r *evaluation.Refusal
	if errors.As(err, &r) {
		return r.Code
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return ""
}

// TestAgentLifecycle: registering, claiming, updating and rotating
// the key of an agent, as the service decides them, without HTTP.
func TestAgentLifecycle(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	x := posts{}
	svc := evaluation.New(evaluation.Config{Versions: st, Agents: st, Attempts: st, Challenges: st, Results: st, Revocations: st, Presented: st, Posts: x,
		Now: func() time.Time { return listingT0 }})
	ctx := t.Context()

	t.Run("register", func(t *testing.T) {
		for _, tt := range []struct {
			name, description, want string
		}{
			{"first-agent", "An agent.", ""},
			{"FIRST-agent", "", "conflict"}, // names are unique ignoring case
			{"no", "", "validation_failed"},
			{"has space", "", "validation_failed"},
			{"register", "", "validation_failed"}, // a path word
			{"claim", "", "validation_failed"},
			{"long-description", strings.Repeat("x", registry.MaxAgentDescription+1), "validation_failed"},
			{"bad-utf8", "\xff", "validation_failed"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				a, creds, err := svc.RegisterAgent(ctx, tt.name, tt.description)
				if got := refusalCode(err); got != tt.want {
					t.Fatalf("RegisterAgent(%q): %q, want %q", tt.name, got, tt.want)
				}
				if err == nil && (a.ID == "" || creds.APIKey == "" || creds.ClaimToken == "" || a.KeyHash == creds.APIKey) {
					t.Errorf("registered %+v with %+v", a, creds)
				}
			})
		}
	})

	a, creds, err := svc.RegisterAgent(ctx, "claimable", "")
	if err != nil {
		t.Fatal(err)
	}
	const good, wrong, noPost = "https://x.com/owner/status/1", "https://x.com/owner/status/2", "https://x.com/owner/status/3"
	x[good] = [2]string{"owner", "I own it: " + strings.ToLower(creds.VerificationCode)}
	x[wrong] = [2]string{"owner", "no code here"}
	t.Run("claim", func(t *testing.T) {
		for _, tt := range []struct {
			name, token, url, want string
		}{
			{"no token", "", good, "validation_failed"},
			{"an oversized token", strings.Repeat("t", 201), good, "validation_failed"},
			{"not a post on X", creds.ClaimToken, "https://example.com/owner/status/1", "validation_failed"},
			{"plain http", creds.ClaimToken, "http://x.com/owner/status/1", "validation_failed"},
			{"an unknown token", "sip_claim_nobody", good, "not_found"},
			{"a post without the code", creds.ClaimToken, wrong, "forbidden"},
			{"a post X cannot show", creds.ClaimToken, noPost, "error: X cannot show this post"},
			{"the owner's post", creds.ClaimToken, good, ""},
			{"again", creds.ClaimToken, good, "conflict"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				claimed, err := svc.ClaimAgent(ctx, tt.token, tt.url)
				if got := refusalCode(err); got != tt.want {
					t.Fatalf("ClaimAgent: %q, want %q", got, tt.want)
				}
				if err == nil && (claimed.Owner != "owner" || claimed.ID != a.ID) {
					t.Errorf("claimed %+v, want owner \"owner\"", claimed)
				}
			})
		}
	})

	t.Run("update", func(t *testing.T) {
		private, long, bad := false, strings.Repeat("#", registry.MaxIdentityMD+1), "\xff"
		for _, tt := range []struct {
			name string
			u    registry.AgentUpdate
			want string
		}{
			{"private", registry.AgentUpdate{ResultsPublic: &private}, ""},
			{"an identity too long", registry.AgentUpdate{IdentityMD: &long}, "payload_too_large"},
			{"an identity not UTF-8", registry.AgentUpdate{IdentityMD: &bad}, "validation_failed"},
			{"a description not UTF-8", registry.AgentUpdate{Description: &bad}, "validation_failed"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := svc.UpdateAgent(ctx, a.ID, tt.u)
				if got := refusalCode(err); got != tt.want {
					t.Errorf("UpdateAgent: %q, want %q", got, tt.want)
				}
			})
		}
		if got, _ := st.AgentByID(ctx, a.ID); got.ResultsPublic {
			t.Errorf("results still public after the update")
		}
	})

	t.Run("rotate", func(t *testing.T) {
		key, err := svc.RotateKey(ctx, a.ID, a.KeyID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.AgentByKeyID(ctx, registry.KeyID(key))
		if err != nil || got.ID != a.ID || !registry.KeyMatches(key, got.KeyHash) {
			t.Fatalf("the new key finds %+v, %v", got, err)
		}
		if _, err := svc.RotateKey(ctx, a.ID, a.KeyID); err == nil {
			t.Errorf("a second rotation with the old key id succeeded")
		}
	})
}
