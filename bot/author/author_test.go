package author_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot/author"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/proposal"
)

// signIn goes through the fake's sign-in as login and returns the token.
func signIn(t *testing.T, gh *githubtest.Fake, c *author.Client, login string) string {
	t.Helper()
	gh.SignInAs(login)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(c.AuthorizeURL("st4te", "http://registry.example/contribute/callback"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	if back.Query().Get("state") != "st4te" {
		t.Fatalf("the authorize page sent back %s", back)
	}
	tok, err := c.Exchange(t.Context(), back.Query().Get("code"), "http://registry.example/contribute/callback")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exchange(t.Context(), back.Query().Get("code"), "http://registry.example/contribute/callback"); !errors.Is(err, author.ErrExchange) {
		t.Errorf("a code used twice: got %v, want ErrExchange", err)
	}
	return tok
}

func setup(t *testing.T) (*githubtest.Fake, *githubtest.Repo, *author.Client) {
	gh := githubtest.New(t)
	repo := gh.CreateRepo("octo-org", "sips", map[string]string{"evaluations/SIP-1.md": "one\n"})
	c := &author.Client{APIURL: gh.URL, WebURL: author.WebURLFor(gh.URL), ClientID: gh.ClientID, ClientSecret: gh.ClientSecret}
	return gh, repo, c
}

func change(branch string) proposal.Change {
	return proposal.Change{Owner: "octo-org", Repo: "sips", Path: "evaluations/SIP-7.md", Content: []byte("seven\n"), Branch: branch,
		Message: "Add SIP-7", Title: "SIP-7: seven", Body: "body"}
}

// TestOpenFromAFork: a person who cannot push gets a fork; each pull
// request branches from the upstream head of that moment (not the fork's
// stale default branch); a taken branch name gets a fresh one; the pull
// request is theirs.
func TestOpenFromAFork(t *testing.T) {
	t.Parallel()
	gh, repo, c := setup(t)
	tok := signIn(t, gh, c, "ada")
	if login, err := c.Login(t.Context(), tok); err != nil || login != "ada" {
		t.Fatalf("Login = %q, %v", login, err)
	}
	first, err := c.Open(t.Context(), tok, change("sip-7"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Fork != "ada/sips" || first.Branch != "sip-7" {
		t.Errorf("first: %+v, want the branch sip-7 on the fork ada/sips", first)
	}
	// Upstream moves on; the fork's default branch is now stale.
	newHead := gh.Push(repo, "main", map[string]string{"evaluations/SIP-2.md": "two\n"})
	second, err := c.Open(t.Context(), tok, change("sip-7"))
	if err != nil {
		t.Fatal(err)
	}
	if second.Branch != "sip-7-2" {
		t.Errorf("a second pull request from a taken branch name: branch %q, want sip-7-2", second.Branch)
	}
	pulls := gh.Pulls(repo)
	if len(pulls) != 2 || pulls[0].Author != "ada" || pulls[1].Author != "ada" || pulls[1].Title != "SIP-7: seven" {
		t.Fatalf("pull requests on the fake: %+v", pulls)
	}
	fork := gh.Repo("ada/sips")
	if got := gh.File(fork, "main", "evaluations/SIP-2.md"); got != "two" || gh.ForkSyncs() != 2 {
		t.Errorf("the fork's main is stale (SIP-2.md is %q, %d syncs)", got, gh.ForkSyncs())
	}
	if got := gh.File(fork, "sip-7-2", "evaluations/SIP-2.md"); got != "two" {
		t.Errorf("the second branch does not start from upstream's current head %s (SIP-2.md is %q)", newHead, got)
	}
	if got := gh.File(fork, "sip-7-2", "evaluations/SIP-7.md"); got != "seven" {
		t.Errorf("the committed file reads %q", got)
	}
	st, err := c.Status(t.Context(), tok, "octo-org", "sips", second.Number)
	if err != nil || st.Author != "ada" || st.State != "open" || st.Approved {
		t.Errorf("Status = %+v, %v", st, err)
	}
	gh.AddReview(gh.Pull(repo, 2), "maintainer", "APPROVED")
	claimed, err := c.Claimed(t.Context(), tok, "octo-org", "sips", "evaluations")
	if err != nil || claimed[7] != "pull request #1" || len(claimed) != 1 {
		t.Errorf("Claimed = %v, %v; want 7 by pull request #1", claimed, err)
	}
}

// TestOpenWithPush: a person who can push branches in the repository
// itself, and an edit of an existing file replaces it.
func TestOpenWithPush(t *testing.T) {
	t.Parallel()
	gh, repo, c := setup(t)
	gh.SetRole("maint", "write")
	tok := signIn(t, gh, c, "maint")
	ch := change("sip-1-edit")
	ch.Path, ch.Content = "evaluations/SIP-1.md", []byte("one, changed\n")
	o, err := c.Open(t.Context(), tok, ch)
	if err != nil {
		t.Fatal(err)
	}
	if o.Fork != "" || gh.Repo("maint/sips") != nil {
		t.Errorf("a person who can push got a fork: %+v", o)
	}
	if got := gh.File(repo, "sip-1-edit", "evaluations/SIP-1.md"); got != "one, changed" {
		t.Errorf("the edited file reads %q", got)
	}
}

// TestForkRefused: GitHub refusing the fork is said as such.
func TestForkRefused(t *testing.T) {
	t.Parallel()
	gh, _, c := setup(t)
	gh.DenyForks("mallory")
	tok := signIn(t, gh, c, "mallory")
	_, err := c.Open(t.Context(), tok, change("sip-7"))
	if !errors.Is(err, author.ErrForkRefused) || !errors.Is(err, registry.ErrForbidden) || !strings.Contains(err.Error(), "fork") {
		t.Errorf("Open without fork permission: %v, want ErrForkRefused", err)
	}
}

// TestExchangeFails: a bad code, wrong App credentials and GitHub down
// are errors, none naming the secret.
func TestExchangeFails(t *testing.T) {
	t.Parallel()
	gh, _, c := setup(t)
	if _, err := c.Exchange(t.Context(), "forged", ""); !errors.Is(err, author.ErrExchange) {
		t.Errorf("a forged code: %v", err)
	}
	bad := *c
	bad.ClientSecret = "wrong"
	if _, err := bad.Exchange(t.Context(), "x", ""); !errors.Is(err, author.ErrExchange) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong App credentials: %v", err)
	}
	gh.Fail(1, 502, nil, func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/login/oauth/access_token") })
	if _, err := c.Exchange(t.Context(), "x", ""); !errors.Is(err, registry.ErrUnavailable) {
		t.Errorf("GitHub down: %v, want ErrUnavailable", err)
	}
}
