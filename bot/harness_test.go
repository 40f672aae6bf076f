package bot_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/metric"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

const secret = "It's a Secret to Everybody"

// stores runs a test on the embedded SQLite store and on PostgreSQL.
func stores(t *testing.T, fn func(t *testing.T, open func(t *testing.T) bot.Store)) {
	for name, open := range map[string]func(testing.TB) bot.Store{"sqlite": openSQLite, "postgres": openPostgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, func(t *testing.T) bot.Store { return open(t) })
		})
	}
}

func openSQLite(t testing.TB) bot.Store { return sqlitetest.Open(t) }

func openPostgres(t testing.TB) bot.Store { return postgrestest.Open(t) }

// benchHarness is a harness on the named store, for benchmarks.
func benchHarness(b *testing.B, store string) *harness {
	open := map[string]func(testing.TB) bot.Store{"sqlite": openSQLite, "postgres": openPostgres}[store]
	return newHarness(b, open(b))
}

// newServer serves h until the test ends and returns its URL.
func newServer(t testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// harness is the App behind sip's HTTP server, talking to a fake GitHub
// that holds one repository of SIPs.
type harness struct {
	t     testing.TB
	gh    *githubtest.Fake
	repo  *githubtest.Repo
	store bot.Store
	app   *bot.App
	srv   *httptest.Server
	api   *apitest.Client // holds every response to the OpenAPI document
}

// bundled is the SIPs shipped with sip, as repository files.
func bundled(t testing.TB) map[string]string {
	files := map[string]string{}
	err := fs.WalkDir(evaluations.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(p, "SIP-") {
			return err
		}
		b, err := fs.ReadFile(evaluations.FS, p)
		files["evaluations/"+p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

type option func(*bot.Config)

func newHarness(t testing.TB, store bot.Store, opts ...option) *harness {
	t.Helper()
	gh := githubtest.New(t)
	files := bundled(t)
	files[".github/sip.yml"] = "maintainers:\n  users: [maintainer]\n  teams: [octo-org/sip-editors]\nrequired_approvals: 1\n"
	repo := gh.CreateRepo("octo-org", "sips", files)
	gh.AddTeam("octo-org/sip-editors")
	gh.AddUsers("maintainer")
	h := &harness{t: t, gh: gh, repo: repo, store: store}
	cfg := bot.Config{Logger: slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		AppID: gh.AppID, PrivateKey: gh.PrivateKey, WebhookSecrets: []string{secret}, APIURL: gh.URL,
		Repository: "octo-org/sips", Store: store, Workers: 3, Poll: 20 * time.Millisecond, ReconcileEvery: time.Hour,
		Backoff: func(int) time.Duration { return 100 * time.Millisecond }}
	for _, o := range opts {
		o(&cfg)
	}
	app, err := bot.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.app = app
	h.srv = httptest.NewServer(api.NewServer(api.Config{Catalog: registry.NewCatalog(store), Webhook: app.Webhook, ReadyDetails: app.ReadyDetails}))
	t.Cleanup(h.srv.Close)
	h.api = apitest.New(t, h.srv.URL)
	return h
}

// testLog sends the App's log to the test's, shown when it fails.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// run starts the App's workers until the test ends.
func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.app.Run(ctx) }()
	h.t.Cleanup(func() { cancel(); <-done })
}

// fixture reads a real webhook payload (octokit/webhooks, MIT).
func fixture(t testing.TB, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "github-webhooks", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sign(body []byte, key string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func newGUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// deliver posts a signed delivery and returns the status.
func (h *harness) deliver(event, guid string, payload any) int {
	h.t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		h.t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", h.srv.URL+api.WebhookPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", guid)
	req.Header.Set("X-Hub-Signature-256", sign(body, secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h.api.Check(req, resp, raw)
	return resp.StatusCode
}

// pullEvent is a real pull_request payload about a pull request of the
// fake, as GitHub would send it now.
func (h *harness) pullEvent(action string, p *githubtest.Pull) map[string]any {
	m := fixture(h.t, "pull_request/synchronize.payload.json")
	m["action"] = action
	m["number"] = p.Number
	pr := m["pull_request"].(map[string]any)
	for k, v := range h.gh.PullJSON(h.repo, p) {
		pr[k] = v
	}
	m["repository"] = h.gh.RepoJSON(h.repo)
	m["installation"] = map[string]any{"id": h.repo.Installation}
	return m
}

func (h *harness) reviewEvent(p *githubtest.Pull, reviewer, state string) map[string]any {
	m := fixture(h.t, "derived/pull_request_review/submitted.approved.derived-from-submitted.payload.json")
	pr := m["pull_request"].(map[string]any)
	for k, v := range h.gh.PullJSON(h.repo, p) {
		pr[k] = v
	}
	review := m["review"].(map[string]any)
	review["state"] = state
	review["user"].(map[string]any)["login"] = reviewer
	m["repository"] = h.gh.RepoJSON(h.repo)
	m["installation"] = map[string]any{"id": h.repo.Installation}
	return m
}

func (h *harness) pushEvent(branch, before, after string) map[string]any {
	m := fixture(h.t, "derived/push/default-branch-update.derived-from-with-new-branch.payload.json")
	m["ref"], m["before"], m["after"] = "refs/heads/"+branch, before, after
	m["repository"] = h.gh.RepoJSON(h.repo)
	m["installation"] = map[string]any{"id": h.repo.Installation}
	return m
}

// eventually waits for cond, failing the test with what describe says.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second) // a GitHub call that times out (30 s) is retried
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// latest is the newest check run with a name on a commit.
func (h *harness) latest(sha, name string) *githubtest.CheckRun {
	runs := h.gh.CheckRuns(sha, name)
	if len(runs) == 0 {
		return nil
	}
	return &runs[len(runs)-1]
}

func (h *harness) waitCheck(sha, name, status, conclusion string) *githubtest.CheckRun {
	h.t.Helper()
	var got *githubtest.CheckRun
	eventually(h.t, fmt.Sprintf("%q %s/%s on %.7s", name, status, conclusion, sha), func() bool {
		got = h.latest(sha, name)
		return got != nil && got.Status == status && got.Conclusion == conclusion
	})
	return got
}

// metrics renders the App's collectors as /metrics would.
func (h *harness) metrics() string {
	h.t.Helper()
	reg := metric.NewRegistry()
	reg.Register(h.app.Collectors()...)
	rec := httptest.NewRecorder()
	reg.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}
