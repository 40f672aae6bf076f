package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/credential"
	"github.com/sipregistry/sip/registry/credential/webfetch"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/registrytest"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// backends opens a fresh, migrated store of each kind.
var backends = map[string]func(t testing.TB) registry.Store{
	"sqlite":   func(t testing.TB) registry.Store { return sqlitetest.Open(t) },
	"postgres": func(t testing.TB) registry.Store { return postgrestest.Open(t) },
}

// forEachBackend runs fn against a server on each store.
func forEachBackend(t *testing.T, fn func(t *testing.T, c *client, s registry.Store)) {
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			fn(t, newClient(t, s), s)
		})
	}
}

// client calls a test server and holds every response to the OpenAPI
// document.
type client struct {
	*apitest.Client
	srv *httptest.Server
}

func newClient(t *testing.T, s registry.Store) *client {
	t.Helper()
	cfg := api.Config{Catalog: registry.NewCatalog(s), Logger: slog.New(slog.DiscardHandler), Version: "test", SealingKey: bundledKey(t), SealingKeyIsDevelopment: true}
	var st runtimeStores
	if full, ok := s.(registrytest.FullStore); ok {
		st = runtimeStores{Agents: full, Evaluations: full, Jobs: full.(jobStore)}
	}
	srv := httptest.NewServer(api.NewServer(withRuntime(cfg, st)))
	t.Cleanup(srv.Close)
	return &client{Client: apitest.New(t, srv.URL), srv: srv}
}

func (c *client) get(path string, out any) *http.Response { c.T.Helper(); return c.Get(path, out) }

func (c *client) do(method, path string, body io.Reader, header http.Header, out any) *http.Response {
	c.T.Helper()
	return c.Do(method, path, body, header, out)
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func syncFiles(t *testing.T, s registry.Store, commit string, files ...registry.File) {
	t.Helper()
	if r, err := registry.Sync(t.Context(), s, registry.Source{Files: files, Commit: commit, Name: "test"}, t0); err != nil {
		t.Fatalf("sync: %v %+v", err, r)
	}
}

func fixture() []registry.File {
	doc := siptest.Set(siptest.SIP(1, "process", "active"), "type: ", "type: process")
	doc = siptest.Set(doc, "executable:", "")
	doc = siptest.Set(doc, "  handler:", "")
	return []registry.File{
		doc,
		siptest.SIP(2, "alpha", "active"),
		siptest.SIP(3, "beta", "active", "alpha"),
		siptest.Set(siptest.SIP(4, "gamma", "draft", "beta"), "module: ", "module: safety"),
	}
}

type errorResponse struct {
	Success     bool   `json:"success"`
	Error       string `json:"error"`
	RequestID   string `json:"request_id"`
	ErrorDetail struct {
		Code  string `json:"code"`
		Field string `json:"field"`
	} `json:"error_detail"`
}

type evaluationList struct {
	Success     bool `json:"success"`
	Evaluations []struct {
		ID            string   `json:"id"`
		SIP           int      `json:"sip"`
		Status        string   `json:"status"`
		Prerequisites []string `json:"prerequisites"`
		CanRegister   bool     `json:"can_register"`
	} `json:"evaluations"`
}

func (l evaluationList) ids() string {
	var out []string
	for _, e := range l.Evaluations {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}

// mustRouter routes requests to the document's operations; the document's
// relative server is pointed at the test server.

// runtimeStores are the stores a test server's evaluation service is
// built over; without Agents it has none and serves the registry only.
type runtimeStores struct {
	Agents      registry.AgentStore
	Evaluations registrytest.FullStore
	Jobs        jobStore
	Sessions    sessionStore
}

// jobStore keeps judging jobs for the runners and the judge worker.
type jobStore interface {
	evaluation.JobStore
	evaluation.JudgingStore
}

// sessionStore keeps multi-agent sessions for every part of the service
// that meets them.
type sessionStore interface {
	evaluation.SessionStore
	evaluation.MessageStore
	evaluation.ProctorStore
	evaluation.SeatStore
}

// withRuntime gives cfg the evaluation service over st, built as sip
// serve builds it (its clock, sealing key and a credential checker that
// fetches over the network), changed by configure.
func withRuntime(cfg api.Config, st runtimeStores, configure ...func(*evaluation.Config)) api.Config {
	if st.Agents == nil {
		return cfg
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	// The partner registries of the tests serve on loopback.
	client := webfetch.Client{Allow: func(ip netip.Addr) bool { return ip.IsLoopback() }}
	ec := evaluation.Config{Agents: st.Agents, Posts: &api.OEmbed{URL: "http://127.0.0.1:1/no-oembed"}, Issuers: webfetch.NewIssuers(client),
		Now: now, Build: cfg.Version, Credentials: &credential.Checker{Keys: &credential.WebResolver{Fetch: client}, Now: now,
			Status: &credential.CachedStatus{Source: &credential.WebStatus{Fetch: client}, TTL: time.Minute, Now: now}}}
	// A nil store in an interface is not a nil interface.
	if st.Evaluations != nil {
		ec.Versions, ec.Attempts, ec.Challenges, ec.Results, ec.Revocations, ec.Presented = st.Evaluations, st.Evaluations, st.Evaluations,
			st.Evaluations, st.Evaluations, st.Evaluations
	}
	if st.Jobs != nil {
		ec.Jobs, ec.Judging = st.Jobs, st.Jobs
	}
	if st.Sessions != nil {
		ec.Sessions, ec.Messages, ec.Proctoring, ec.Seats = st.Sessions, st.Sessions, st.Sessions, st.Sessions
	}
	if cfg.SealingKey != nil {
		ec.Key = cfg.SealingKey
	}
	for _, c := range configure {
		c(&ec)
	}
	cfg.Service = evaluation.New(ec)
	return cfg
}

// withOEmbed reads posts on X from the oEmbed endpoint at url.
func withOEmbed(url string) func(*evaluation.Config) {
	return func(c *evaluation.Config) { c.Posts = &api.OEmbed{URL: url} }
}
