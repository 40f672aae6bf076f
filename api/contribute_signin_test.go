package api_test

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/bot/author"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/proposal"
	"github.com/sipregistry/sip/registry/sqlite"
	"net/http/httptest"
)

// lockedBuffer collects a server's log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// signInEnv is a registry whose editor signs people in on a fake GitHub,
// whose repository octo-org/sips holds the bundled SIPs.
type signInEnv struct {
	gh     *githubtest.Fake
	repo   *githubtest.Repo
	base   string
	dbPath string
	logs   *lockedBuffer
}

func newSignInEnv(t *testing.T) *signInEnv {
	t.Helper()
	gh := githubtest.New(t)
	files := map[string]string{}
	fs.WalkDir(evaluations.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(p, "SIP-") {
			b, _ := fs.ReadFile(evaluations.FS, p)
			files["evaluations/"+p] = string(b)
		}
		return err
	})
	repo := gh.CreateRepo("octo-org", "sips", files)
	dbPath := filepath.Join(t.TempDir(), "registry.db")
	st, err := sqlite.Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	rfiles, err := registry.ReadFS(evaluations.FS, ".", "evaluations")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Sync(t.Context(), st, registry.Source{Files: rfiles, Commit: gh.Head(repo, "main"), Name: "test"}, webT0); err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	key := bytes.Repeat([]byte{7}, 32)
	svc, err := proposal.New(proposal.Config{Store: st, GitHub: &author.Client{APIURL: gh.URL, WebURL: gh.URL, ClientID: gh.ClientID, ClientSecret: gh.ClientSecret},
		Key: key, Owner: "octo-org", Repo: "sips", SignInOrigin: gh.URL, MaxDrafts: 2, MaxDraftBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	h = api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(st), Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Version: "test", BaseURL: srv.URL, SealingKey: bundledKey(t), CommitURL: "https://github.com/octo-org/sips/commit/{sha}", Proposals: svc},
		runtimeStores{Agents: st, Evaluations: st, Jobs: st, Sessions: st}))
	return &signInEnv{gh: gh, repo: repo, base: srv.URL, dbPath: dbPath, logs: logs}
}

// follow requests an absolute URL (GitHub's pages) in the browser.
func (b *browser) follow(u string) *http.Response {
	b.t.Helper()
	resp, err := b.c.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// beginSignIn presses "Sign in with GitHub" and passes GitHub's page:
// it returns the callback GitHub sends the browser to.
func (e *signInEnv) beginSignIn(b *browser, login string) string {
	b.t.Helper()
	e.gh.SignInAs(login)
	_, page := b.get("/contribute")
	resp, _ := b.post("/contribute/signin", editorForm(b.t, page))
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), e.gh.URL+"/login/oauth/authorize?") {
		b.t.Fatalf("sign-in: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	back := b.follow(resp.Header.Get("Location"))
	if back.StatusCode != http.StatusFound {
		b.t.Fatalf("GitHub's authorize page: %d", back.StatusCode)
	}
	return back.Header.Get("Location")
}

// signIn signs the browser in as login.
func (e *signInEnv) signIn(b *browser, login string) {
	b.t.Helper()
	callback := e.beginSignIn(b, login)
	resp := b.follow(callback)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/contribute" {
		b.t.Fatalf("callback: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, page := b.get("/contribute"); !strings.Contains(page, "Signed in as <strong>@"+login+"</strong>") {
		b.t.Fatalf("after signing in the page reads\n%s", page)
	}
}

func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.base + "/contribute/callback")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

var fileArea = regexp.MustCompile(`(?s)<textarea id="file" name="file"[^>]*>(.*?)</textarea>`)

func unescape(s string) string {
	return strings.NewReplacer("&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

// TestContributeSignInAndPropose: a person signs in with GitHub, proposes
// a new SIP and a change to one; the pull requests are theirs, from their
// fork, branched from the current head, with the template filled in; the
// editor shows each one's checks and approval. Their token is stored
// only sealed and never logged.
func TestContributeSignInAndPropose(t *testing.T) {
	t.Parallel()
	e := newSignInEnv(t)
	b := newBrowser(t, e.base)
	e.signIn(b, "ada")

	_, page := b.get("/contribute/new?type=simple_pass_fail")
	if !strings.Contains(page, "Open the pull request as @ada") {
		t.Fatalf("the signed-in editor has no pull request button:\n%s", page)
	}
	form := newSIPForm(editorForm(t, page), "Greeting")
	form.Set("action", "propose")
	form.Set("note", "Agents should greet <b>politely</b>.")
	resp, page := b.post("/contribute", form)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/contribute/pulls/1" {
		t.Fatalf("propose: %d to %q\n%s", resp.StatusCode, resp.Header.Get("Location"), page)
	}
	pulls := e.gh.Pulls(e.repo)
	if len(pulls) != 1 || pulls[0].Author != "ada" || pulls[0].Title != "SIP-31: Greeting" || pulls[0].HeadRef != "sip-31-greeting" {
		t.Fatalf("pull requests: %+v", pulls)
	}
	fork := e.gh.Repo("ada/sips")
	if fork == nil || !strings.Contains(e.gh.File(fork, "sip-31-greeting", "evaluations/SIP-31.md"), "name: Greeting") {
		t.Fatal("the file is not on the fork's branch")
	}
	for _, want := range []string{"Agents should greet <b>politely</b>.", "- [x] The file is `evaluations/SIP-31.md`", "by @ada"} {
		if !strings.Contains(e.gh.PullJSON(e.repo, e.gh.Pull(e.repo, 1))["body"].(string), want) {
			t.Errorf("the description lacks %q", want)
		}
	}
	resp, page = b.get("/contribute/pulls/1")
	if resp.StatusCode != 200 || !strings.Contains(page, "@ada") || !strings.Contains(page, `http-equiv="refresh"`) || !strings.Contains(page, "No check has reported yet") {
		t.Errorf("the pull request's page: %d\n%s", resp.StatusCode, page)
	}
	e.gh.AddReview(e.gh.Pull(e.repo, 1), "maintainer", "APPROVED")
	if _, page = b.get("/contribute/pulls/1"); !strings.Contains(page, `<span class="tag pass">approved</span>`) {
		t.Errorf("the approval is not shown:\n%s", page)
	}

	// A change to SIP-2, after upstream moved on: its branch starts at
	// upstream's current head.
	moved := e.gh.Push(e.repo, "main", map[string]string{"NOTES.md": "moved on\n"})
	_, page = b.get("/contribute/edit/SIP-2")
	m := fileArea.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no file field")
	}
	form = editorForm(t, page)
	form.Set("mode", "file")
	form.Set("edit", "SIP-2")
	form.Set("file", unescape(m[1])+"\nOne more line.\n")
	form.Set("action", "propose")
	if resp, page = b.post("/contribute", form); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/contribute/pulls/2" {
		t.Fatalf("propose a change: %d\n%s", resp.StatusCode, page)
	}
	pulls = e.gh.Pulls(e.repo)
	if p := pulls[1]; p.Author != "ada" || !strings.HasPrefix(p.Title, "SIP-2: ") || e.gh.File(fork, p.HeadRef, "NOTES.md") != "moved on" {
		t.Errorf("the change's pull request %+v does not start from upstream's head %s", p, moved)
	}

	// The token, at rest: sealed in its row, never the text.
	tokens := e.gh.UserTokens()
	db, err := sql.Open("sqlite", e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sum := sha256.Sum256([]byte(b.cookie("sip_session")))
	var login string
	var sealed []byte
	if err := db.QueryRow("SELECT login, token FROM editor_sessions WHERE id_hash = ?", hex.EncodeToString(sum[:])).Scan(&login, &sealed); err != nil {
		t.Fatal(err)
	}
	if login != "ada" || len(sealed) < 28 || len(tokens) != 1 || bytes.Contains(sealed, []byte(tokens[0])) || bytes.Contains(sealed, []byte(tokens[0][4:])) {
		t.Errorf("the session row holds %q, %x; the token is %q", login, sealed, tokens)
	}
	var raw string
	db.QueryRow("SELECT group_concat(id_hash || login || hex(token), ' ') FROM editor_sessions").Scan(&raw)
	if strings.Contains(raw, b.cookie("sip_session")) || strings.Contains(strings.ToLower(raw), hex.EncodeToString([]byte(tokens[0]))) {
		t.Error("a session's value or a token is in the database in clear")
	}
	logs := e.logs.String()
	if strings.Contains(logs, tokens[0]) || strings.Contains(logs, b.cookie("sip_session")) || !strings.Contains(logs, "signed in to the editor") {
		t.Errorf("the log holds a secret, or nothing of the sign-in:\n%s", logs)
	}

	// Signing out ends the session on the server.
	_, page = b.get("/contribute")
	if resp, _ := b.post("/contribute/signout", editorForm(t, page)); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("sign out: %d", resp.StatusCode)
	}
	var n int
	db.QueryRow("SELECT count(*) FROM editor_sessions WHERE login = 'ada'").Scan(&n)
	if n != 0 {
		t.Errorf("%d sessions of ada after signing out", n)
	}
}

// TestContributeSignInRefused: a callback whose state is not the
// browser's, forged, replayed, or whose code GitHub refuses signs nobody
// in.
func TestContributeSignInRefused(t *testing.T) {
	t.Parallel()
	e := newSignInEnv(t)
	refused := func(t *testing.T, b *browser, callback string, want int) {
		t.Helper()
		resp, page := b.get(strings.TrimPrefix(callback, e.base))
		if resp.StatusCode != want || b.cookie("sip_session") != "" {
			t.Errorf("callback %s: %d (session %q), want %d\n%.400s", callback, resp.StatusCode, b.cookie("sip_session"), want, page)
		}
	}
	t.Run("another browser's state", func(t *testing.T) {
		callback := e.beginSignIn(newBrowser(t, e.base), "ada")
		refused(t, newBrowser(t, e.base), callback, http.StatusBadRequest)
	})
	t.Run("a forged state", func(t *testing.T) {
		b := newBrowser(t, e.base)
		callback := e.beginSignIn(b, "ada")
		u, _ := url.Parse(callback)
		q := u.Query()
		q.Set("state", strings.Repeat("x", 43))
		u.RawQuery = q.Encode()
		refused(t, b, u.String(), http.StatusBadRequest)
	})
	t.Run("a state the server did not issue, in the cookie too", func(t *testing.T) {
		b := newBrowser(t, e.base)
		cu, _ := url.Parse(e.base + "/contribute/callback")
		b.c.Jar.SetCookies(cu, []*http.Cookie{{Name: "sip_signin", Value: "forged", Path: "/contribute/callback"}})
		refused(t, b, e.base+"/contribute/callback?state=forged&code=x", http.StatusBadRequest)
	})
	t.Run("a replayed callback", func(t *testing.T) {
		b := newBrowser(t, e.base)
		callback := e.beginSignIn(b, "ada")
		state := b.cookie("sip_signin")
		if resp := b.follow(callback); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("the first callback: %d", resp.StatusCode)
		}
		// The same request again, cookie and all, from a fresh browser.
		replay := newBrowser(t, e.base)
		cu, _ := url.Parse(e.base + "/contribute/callback")
		replay.c.Jar.SetCookies(cu, []*http.Cookie{{Name: "sip_signin", Value: state, Path: "/contribute/callback"}})
		refused(t, replay, callback, http.StatusBadRequest)
	})
	t.Run("GitHub refuses the code", func(t *testing.T) {
		b := newBrowser(t, e.base)
		callback := e.beginSignIn(b, "ada")
		u, _ := url.Parse(callback)
		q := u.Query()
		q.Set("code", "not-a-code")
		u.RawQuery = q.Encode()
		refused(t, b, u.String(), http.StatusBadRequest)
	})
	t.Run("GitHub is down", func(t *testing.T) {
		b := newBrowser(t, e.base)
		callback := e.beginSignIn(b, "ada")
		e.gh.Fail(1, http.StatusBadGateway, nil, func(r *http.Request) bool { return r.URL.Path == "/login/oauth/access_token" })
		refused(t, b, callback, http.StatusServiceUnavailable)
	})
	t.Run("the person denies the App", func(t *testing.T) {
		b := newBrowser(t, e.base)
		callback := e.beginSignIn(b, "ada")
		u, _ := url.Parse(callback)
		q := u.Query()
		q.Del("code")
		q.Set("error", "access_denied")
		u.RawQuery = q.Encode()
		refused(t, b, u.String(), http.StatusBadRequest)
	})
}

// TestContributeSignedInCSRF: every form of the signed-in editor wants
// the browser's token.
func TestContributeSignedInCSRF(t *testing.T) {
	t.Parallel()
	e := newSignInEnv(t)
	b := newBrowser(t, e.base)
	e.signIn(b, "ada")
	_, page := b.get("/contribute/new?type=simple_pass_fail")
	good := newSIPForm(editorForm(t, page), "Greeting")
	good.Set("action", "save")
	if resp, page := b.post("/contribute", good); resp.StatusCode != 200 || !strings.Contains(page, "Draft saved") {
		t.Fatalf("save: %d\n%s", resp.StatusCode, page)
	}
	drafts := regexp.MustCompile(`/contribute/drafts/([0-9a-f]+)"`)
	_, list := b.get("/contribute/drafts")
	id := drafts.FindStringSubmatch(list)
	if id == nil {
		t.Fatalf("no draft listed:\n%s", list)
	}
	for _, path := range []string{"/contribute/signin", "/contribute/signout", "/contribute/drafts/" + id[1] + "/delete"} {
		for name, form := range map[string]url.Values{"no token": {}, "a wrong token": {"csrf": {strings.Repeat("A", 43)}}} {
			if resp, _ := b.post(path, form); resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s with %s: %d, want 403", path, name, resp.StatusCode)
			}
		}
	}
	for _, action := range []string{"save", "propose"} {
		bad := newSIPForm(url.Values{"csrf": {strings.Repeat("A", 43)}}, "Greeting")
		bad.Set("action", action)
		if resp, _ := b.post("/contribute", bad); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s with a wrong token: %d, want 403", action, resp.StatusCode)
		}
	}
	if len(e.gh.Pulls(e.repo)) != 0 {
		t.Error("a pull request was opened without the form's token")
	}
	if _, list := b.get("/contribute/drafts"); !strings.Contains(list, id[1]) {
		t.Error("the draft was deleted without the form's token")
	}
}

// TestContributeDrafts: drafts are kept per person, resumed, limited in
// number and size, and deleted.
func TestContributeDrafts(t *testing.T) {
	t.Parallel()
	e := newSignInEnv(t)
	ada, bob := newBrowser(t, e.base), newBrowser(t, e.base)
	e.signIn(ada, "ada")
	e.signIn(bob, "bob")
	_, page := ada.get("/contribute/new?type=simple_pass_fail")
	form := newSIPForm(editorForm(t, page), "Greeting <i>one</i>")
	form.Set("action", "save")
	_, page = ada.post("/contribute", form)
	m := regexp.MustCompile(`name="draft" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no draft id after saving:\n%s", page)
	}
	// Saving again replaces it.
	form.Set("draft", m[1])
	form.Set("name", "Greeting two")
	ada.post("/contribute", form)
	_, list := ada.get("/contribute/drafts")
	if strings.Count(list, "/contribute/drafts/"+m[1]+`"`) != 1 || !strings.Contains(list, "Greeting two") || strings.Contains(list, "<i>one</i>") {
		t.Errorf("the drafts list:\n%s", list)
	}
	if _, page = ada.get("/contribute/drafts/" + m[1]); !strings.Contains(page, `value="Greeting two"`) || !strings.Contains(page, "passes the repository") {
		t.Errorf("the resumed draft:\n%.2000s", page)
	}
	if resp, _ := bob.get("/contribute/drafts/" + m[1]); resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob opens ada's draft: %d, want 404", resp.StatusCode)
	}
	if _, list := bob.get("/contribute/drafts"); strings.Contains(list, m[1]) {
		t.Error("bob sees ada's draft")
	}
	// A second draft, then the limit (2 in this registry).
	form.Del("draft")
	ada.post("/contribute", form)
	if _, page = ada.post("/contribute", form); !strings.Contains(page, "you keep 2 drafts already") {
		t.Errorf("a third draft:\n%.2000s", page)
	}
	// Too large for a draft (64 KiB here), though within the request limit.
	big := newSIPForm(form, "Big")
	big.Set("action", "save")
	big.Set("body", strings.Repeat("word ", 20000))
	if _, page = bob.post("/contribute", withCSRF(t, bob, big)); !strings.Contains(page, "over 64 KiB") {
		t.Errorf("a huge draft:\n%.2000s", page)
	}
	// A request body past the server's limit is refused before reading.
	huge := newSIPForm(form, "Huge")
	huge.Set("body", strings.Repeat("x", 2<<20))
	if resp, _ := ada.post("/contribute", huge); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB form: %d, want 413", resp.StatusCode)
	}
	_, list = ada.get("/contribute/drafts")
	if resp, _ := ada.post("/contribute/drafts/"+m[1]+"/delete", editorForm(t, list)); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("delete: %d", resp.StatusCode)
	}
	if resp, _ := ada.get("/contribute/drafts/" + m[1]); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a deleted draft: %d, want 404", resp.StatusCode)
	}
}

// withCSRF puts the browser's own token in a form.
func withCSRF(t *testing.T, b *browser, form url.Values) url.Values {
	t.Helper()
	_, page := b.get("/contribute")
	form.Set("csrf", editorForm(t, page).Get("csrf"))
	return form
}

// TestContributeProposeRefusals: a number taken between the preview and
// the pull request, a person GitHub will not fork for, a branch name
// that exists, hostile text in every field.
func TestContributeProposeRefusals(t *testing.T) {
	t.Parallel()
	e := newSignInEnv(t)
	t.Run("number taken since the preview", func(t *testing.T) {
		b := newBrowser(t, e.base)
		e.signIn(b, "ada")
		_, page := b.get("/contribute/new?type=simple_pass_fail")
		form := newSIPForm(editorForm(t, page), "Greeting")
		if _, page = b.post("/contribute", form); !strings.Contains(page, "passes the repository") {
			t.Fatalf("the preview:\n%s", page)
		}
		// Someone else's pull request adds SIP-31 in the meantime.
		e.gh.Push(e.repo, "other-31", map[string]string{"evaluations/SIP-31.md": "x\n"})
		e.gh.OpenPull(e.repo, "other-31", "grace")
		form.Set("action", "propose")
		resp, page := b.post("/contribute", form)
		if resp.StatusCode != 200 || !strings.Contains(page, "SIP-31 was taken by another pull request") || !strings.Contains(page, `name="sip" type="number" min="1" value="32"`) {
			t.Fatalf("a taken number: %d\n%s", resp.StatusCode, page)
		}
		form.Set("sip", "32")
		if resp, _ = b.post("/contribute", form); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("the next number: %d", resp.StatusCode)
		}
		pulls := e.gh.Pulls(e.repo)
		if last := pulls[len(pulls)-1]; last.Author != "ada" || last.Title != "SIP-32: Greeting" {
			t.Errorf("the pull request: %+v", last)
		}
	})
	t.Run("no fork allowed", func(t *testing.T) {
		e.gh.DenyForks("mallory")
		b := newBrowser(t, e.base)
		e.signIn(b, "mallory")
		_, page := b.get("/contribute/new?type=simple_pass_fail")
		form := newSIPForm(editorForm(t, page), "Greeting")
		form.Set("sip", "40")
		form.Set("id", "mallory-greeting")
		form.Set("action", "propose")
		resp, page := b.post("/contribute", form)
		if resp.StatusCode != 200 || !strings.Contains(page, "GitHub refused to fork the repository for you") {
			t.Errorf("fork refused: %d\n%s", resp.StatusCode, page)
		}
	})
	t.Run("the branch exists", func(t *testing.T) {
		e.gh.SetRole("maintainer", "write")
		e.gh.Push(e.repo, "sip-41-maintained", map[string]string{"other.txt": "x\n"})
		b := newBrowser(t, e.base)
		e.signIn(b, "maintainer")
		_, page := b.get("/contribute/new?type=simple_pass_fail")
		form := newSIPForm(editorForm(t, page), "Maintained")
		form.Set("sip", "41")
		form.Set("id", "maintained")
		form.Set("action", "propose")
		if resp, page := b.post("/contribute", form); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("propose: %d\n%s", resp.StatusCode, page)
		}
		pulls := e.gh.Pulls(e.repo)
		if last := pulls[len(pulls)-1]; last.HeadRef != "sip-41-maintained-2" || last.Author != "maintainer" {
			t.Errorf("the pull request's branch: %+v, want sip-41-maintained-2", last)
		}
		if e.gh.Repo("maintainer/sips") != nil {
			t.Error("a person who can push got a fork")
		}
	})
	t.Run("hostile fields", func(t *testing.T) {
		b := newBrowser(t, e.base)
		e.signIn(b, "eve")
		_, page := b.get("/contribute/new?type=simple_pass_fail")
		form := newSIPForm(editorForm(t, page), `<script>alert(1)</script>"><img src=x onerror=alert(2)>`)
		form.Set("sip", "42")
		form.Set("id", "hostile")
		form.Set("author", `Eve <script>alert(3)</script> "a: b" &x *y`)
		form.Set("note", "<script>alert(4)</script>")
		form.Set("body", "# SIP-42: x\n\n<script>alert(5)</script>\n\n## How it runs\n\n<img src=x onerror=alert(6)>\n\n## Passing\n\nok\n")
		_, page = b.post("/contribute", form)
		if strings.Count(page, "<script") != 1 || strings.Contains(page, "<img src=x") {
			t.Errorf("hostile text reaches the page unescaped:\n%s", page)
		}
		form.Set("action", "propose")
		resp, page := b.post("/contribute", form)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("propose: %d\n%s", resp.StatusCode, page)
		}
		n := strings.TrimPrefix(resp.Header.Get("Location"), "/contribute/pulls/")
		if _, page = b.get("/contribute/pulls/" + n); strings.Contains(page, "<script>alert") || !strings.Contains(page, "&lt;script&gt;alert(1)") {
			t.Errorf("the pull request's page:\n%s", page)
		}
		pulls := e.gh.Pulls(e.repo)
		file := e.gh.File(e.gh.Repo("eve/sips"), pulls[len(pulls)-1].HeadRef, "evaluations/SIP-42.md")
		d := registry.Parse("evaluations/SIP-42.md", []byte(file+"\n"))
		if d.SIP == nil || d.SIP.Number != 42 || !strings.Contains(d.SIP.Name, "<script>alert(1)</script>") {
			t.Errorf("the committed file does not parse back to its fields:\n%s", file)
		}
	})
}

// TestContributeAttacksOnSessionsAndDrafts: a session value planted in a
// browser before sign-in is never the session after it, nor a session at
// all; a signed-out session's value replayed signs nobody in; another
// person's draft id, guessed, neither overwrites nor deletes the draft;
// saves racing past the per-person limit keep at most the limit.
func TestContributeAttacksOnSessionsAndDrafts(t *testing.T) {
	t.Parallel()
	e := newSignInEnv(t)
	u, _ := url.Parse(e.base + "/contribute")
	plant := func(b *browser, value string) {
		b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "sip_session", Value: value, Path: "/contribute"}})
	}
	signedOut := func(name string, b *browser) {
		t.Helper()
		if resp, _ := b.get("/contribute/drafts"); resp.StatusCode != http.StatusSeeOther {
			t.Errorf("%s: /contribute/drafts answered %d, want 303 to /contribute (signed out)", name, resp.StatusCode)
		}
	}

	t.Run("fixation", func(t *testing.T) {
		const planted = "planted-by-mallory-0123456789abcdefghijklmno"
		ada := newBrowser(t, e.base)
		plant(ada, planted)
		e.signIn(ada, "ada")
		if got := ada.cookie("sip_session"); got == planted || got == "" {
			t.Errorf("the session after sign-in is %q, want a new value", got)
		}
		mallory := newBrowser(t, e.base)
		plant(mallory, planted)
		signedOut("the planted value", mallory)
	})

	t.Run("replay after sign-out", func(t *testing.T) {
		ada := newBrowser(t, e.base)
		e.signIn(ada, "ada")
		old := ada.cookie("sip_session")
		_, page := ada.get("/contribute")
		if resp, _ := ada.post("/contribute/signout", editorForm(t, page)); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign out: %d", resp.StatusCode)
		}
		thief := newBrowser(t, e.base)
		plant(thief, old)
		signedOut("the signed-out session's value", thief)
	})

	t.Run("another person's draft", func(t *testing.T) {
		ada, bob := newBrowser(t, e.base), newBrowser(t, e.base)
		e.signIn(ada, "ada")
		e.signIn(bob, "bob")
		_, page := ada.get("/contribute/new?type=simple_pass_fail")
		form := newSIPForm(editorForm(t, page), "Ada's own")
		form.Set("action", "save")
		_, page = ada.post("/contribute", form)
		m := regexp.MustCompile(`name="draft" value="([0-9a-f]+)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no draft id after saving:\n%.2000s", page)
		}
		steal := newSIPForm(url.Values{}, "Bob's overwrite")
		steal.Set("action", "save")
		steal.Set("draft", m[1])
		if _, page := bob.post("/contribute", withCSRF(t, bob, steal)); !strings.Contains(page, "That draft is gone") {
			t.Errorf("bob saves over ada's draft id: want it refused as gone\n%.2000s", page)
		}
		bob.post("/contribute/drafts/"+m[1]+"/delete", withCSRF(t, bob, url.Values{}))
		if _, page := ada.get("/contribute/drafts/" + m[1]); !strings.Contains(page, `value="Ada&#39;s own"`) {
			t.Errorf("ada's draft after bob's save and delete under its id:\n%.2000s", page)
		}
		if _, list := bob.get("/contribute/drafts"); strings.Contains(list, "Bob&#39;s overwrite") {
			t.Error("bob's save under ada's id became a draft of his")
		}
	})

	t.Run("racing the limit", func(t *testing.T) {
		cy := newBrowser(t, e.base)
		e.signIn(cy, "cy")
		_, page := cy.get("/contribute/new?type=simple_pass_fail")
		form := newSIPForm(editorForm(t, page), "Racing")
		form.Set("action", "save")
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				resp, err := cy.c.PostForm(e.base+"/contribute", form)
				if err == nil {
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		_, list := cy.get("/contribute/drafts")
		if n := len(regexp.MustCompile(`/contribute/drafts/[0-9a-f]+"`).FindAllString(list, -1)); n != 2 {
			t.Errorf("%d drafts after 8 racing saves, want the limit, 2", n)
		}
	})
}

// TestContributeSignInKeepsTheForm: the editor's sign-in button sends the
// form; it waits on the server, bound to that sign-in, and comes back in
// the editor as the person's draft. Another browser, a replayed or forged
// callback restores nothing; a form larger than a draft is not carried.
func TestContributeSignInKeepsTheForm(t *testing.T) {
	t.Parallel()
	e := newSignInEnv(t)
	ada := newBrowser(t, e.base)
	_, page := ada.get("/contribute/new?type=simple_pass_fail")
	if !regexp.MustCompile(`(?s)<form [^>]*id="editor".*name="action" value="check".*formaction="/contribute/signin".*</form>`).MatchString(page) {
		t.Fatalf("the sign-in button is not the editor form's:\n%.3000s", page)
	}
	form := newSIPForm(editorForm(t, page), "Greeting <kept>")
	form.Set("action", "signin")
	form.Set("body", form.Get("body")+"\nWritten before signing in.\n")
	e.gh.SignInAs("ada")
	resp, _ := ada.post("/contribute/signin", form)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), e.gh.URL+"/login/oauth/authorize?") {
		t.Fatalf("sign-in from the editor: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	callback := ada.follow(resp.Header.Get("Location")).Header.Get("Location")
	cu, _ := url.Parse(e.base + "/contribute/callback")
	u, _ := url.Parse(callback)
	state := u.Query().Get("state")

	t.Run("another browser", func(t *testing.T) {
		other := newBrowser(t, e.base)
		if resp, page := other.get(strings.TrimPrefix(callback, e.base)); resp.StatusCode != http.StatusBadRequest || strings.Contains(page, "Written before") {
			t.Errorf("another browser's callback: %d\n%.400s", resp.StatusCode, page)
		}
	})
	t.Run("a forged state", func(t *testing.T) {
		forger := newBrowser(t, e.base)
		forger.c.Jar.SetCookies(cu, []*http.Cookie{{Name: "sip_signin", Value: state + "x", Path: "/contribute/callback"}})
		if resp, _ := forger.get("/contribute/callback?state=" + url.QueryEscape(state+"x") + "&code=" + u.Query().Get("code")); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("a forged state: %d, want 400", resp.StatusCode)
		}
	})

	resp = ada.follow(callback)
	to := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(to, "/contribute/drafts/") {
		t.Fatalf("callback: %d to %q, want the draft", resp.StatusCode, to)
	}
	_, page = ada.get(to)
	for _, want := range []string{`value="Greeting &lt;kept&gt;"`, "Written before signing in.", "Signed in as <strong>@ada</strong>", "passes the repository", `name="draft" value="` + strings.TrimPrefix(to, "/contribute/drafts/") + `"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the editor after signing in lacks %q:\n%.3000s", want, page)
		}
	}
	if _, list := ada.get("/contribute/drafts"); strings.Count(list, `href="`+to+`"`) != 1 {
		t.Errorf("My drafts does not list %s:\n%s", to, list)
	}

	t.Run("a replayed callback", func(t *testing.T) {
		replay := newBrowser(t, e.base)
		replay.c.Jar.SetCookies(cu, []*http.Cookie{{Name: "sip_signin", Value: state, Path: "/contribute/callback"}})
		if resp, page := replay.get(strings.TrimPrefix(callback, e.base)); resp.StatusCode != http.StatusBadRequest || replay.cookie("sip_session") != "" || strings.Contains(page, "Written before") {
			t.Errorf("a replayed callback: %d\n%.400s", resp.StatusCode, page)
		}
		if _, list := ada.get("/contribute/drafts"); strings.Count(list, "Greeting &lt;kept&gt;") != 1 {
			t.Errorf("after a replay, the drafts:\n%s", list)
		}
	})

	t.Run("larger than a draft", func(t *testing.T) {
		bob := newBrowser(t, e.base)
		_, page := bob.get("/contribute/new?type=simple_pass_fail")
		big := newSIPForm(editorForm(t, page), "Big")
		big.Set("action", "signin")
		big.Set("body", strings.Repeat("word ", 20000)) // 100 KB, over this registry's 64 KiB
		resp, page := bob.post("/contribute/signin", big)
		if resp.StatusCode != http.StatusOK || !strings.Contains(page, "more than a sign-in may carry") || !strings.Contains(page, `value="Big"`) {
			t.Errorf("a form larger than a draft: %d to %q\n%.2000s", resp.StatusCode, resp.Header.Get("Location"), page)
		}
		if bob.cookie("sip_signin") != "" {
			t.Error("a sign-in began for a form too large to carry")
		}
	})

	t.Run("drafts full", func(t *testing.T) {
		// ada keeps one draft; a second, then the sign-in's form makes a third (the limit is 2).
		_, page := ada.get("/contribute/new?type=simple_pass_fail")
		f := newSIPForm(editorForm(t, page), "Second")
		f.Set("action", "save")
		ada.post("/contribute", f)
		ada.post("/contribute/signout", editorForm(t, page))
		_, page = ada.get("/contribute/new?type=simple_pass_fail")
		f = newSIPForm(editorForm(t, page), "Third")
		f.Set("action", "signin")
		e.gh.SignInAs("ada")
		resp, _ := ada.post("/contribute/signin", f)
		back := ada.follow(resp.Header.Get("Location")).Header.Get("Location")
		resp, err := ada.c.Get(back)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `value="Third"`) || !strings.Contains(string(body), "you keep 2 drafts already") {
			t.Errorf("signing in with full drafts: %d\n%.3000s", resp.StatusCode, body)
		}
	})
}
