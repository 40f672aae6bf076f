// Package api is sip's HTTP server: the read API of the registry, the
// agents' evaluation API, the web pages and the GitHub App's webhook,
// with one error model, request ids, structured logs and Prometheus
// metrics. It adapts HTTP only: each handler decodes a request, calls a
// service that cmd/sip built over the store (the evaluation service in
// registry/evaluation, which decides every rule an agent meets; the
// registry's catalogue, registry.Catalog; the statistics, stats.Service),
// and encodes the answer. It holds no store (boundary_test.go).
package api

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/sipregistry/sip/api/mcp"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/credential"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/ratelimit"
	"github.com/sipregistry/sip/registry/seal"
	"github.com/sipregistry/sip/registry/stats"
)

// Config is what the server is built from.
type Config struct {
	// Catalog is the registry's catalogue of SIPs (cmd/sip builds it over
	// the store); every server has one.
	Catalog *registry.Catalog
	// Service is the evaluation service every endpoint about agents,
	// attempts, results, jobs and sessions calls (cmd/sip builds it, with
	// the judge worker and the sweeper). What it serves (its Serves) says
	// which endpoints exist; without one the server serves the registry
	// only.
	Service *evaluation.Service
	// BaseURL is the public URL of the service: links it hands out
	// (claim_url, fetch_url, poll_url) start with it. Without one they are
	// paths; it is never taken from a request's Host header.
	BaseURL string
	// Now tells the time (time.Now when nil).
	Now func() time.Time
	// PublicRate limits unauthenticated writes (agent registration and
	// claims) per client address and minute; 0 means 20.
	PublicRate int
	// Limiter keeps the rate limits' counts: ratelimit.NewShared over the
	// database for replicas that must share them (PostgreSQL); nil keeps
	// them in this process (ratelimit.NewMemory).
	Limiter Limiter
	// Logger receives one line per request and every server-side failure.
	Logger *slog.Logger
	// Version is reported by /healthz and in the OpenAPI document.
	Version string
	// CommitURL links a version's commit on the web pages: a URL with
	// {sha} where the commit goes (no links when empty). A GitHub
	// repository's (https://github.com/OWNER/REPO/commit/{sha}) also
	// gives the SIP pages their source file and the editor GitHub's
	// new-file page.
	CommitURL string
	// SourceBranch is the repository's default branch, where the editor
	// proposes new files ("main" when empty).
	SourceBranch string
	// Webhook, when set, receives the GitHub App's webhooks at
	// WebhookPath; it reads the body itself, under its own cap.
	Webhook echo.HandlerFunc
	// ReadyDetails, when set, adds details to /readyz's checks (the
	// GitHub App's: whether the default branch is verified).
	ReadyDetails func(context.Context) map[string]string
	// TrustedProxies are the load balancers in front of the server: a
	// request from one of them is attributed (for rate limits and logs) to
	// the address X-Forwarded-For names, walking back past trusted hops
	// only. Without any, X-Forwarded-For is ignored.
	TrustedProxies []*net.IPNet
	// SealingKey opens benchmarks' sealed answers; its public half is
	// served at /api/v1/sealing-key. Without one, benchmarks with sealed
	// answers cannot be taken.
	SealingKey *seal.Key
	// SealingKeyIsDevelopment says SealingKey is sip's bundled development
	// key, whose private half is public.
	SealingKeyIsDevelopment bool
	// Stats computes what the statistics pages and /metrics show;
	// without it there are none.
	Stats *stats.Service
	// Issuer signs passes as Open Badges credentials and publishes its
	// keys at /.well-known/did.json; without one, no credentials.
	Issuer *credential.Issuer
	// LegacyVetting switches SafeMolt's deprecated vetting endpoints on.
	LegacyVetting LegacyVetting
	// Proposals signs people in with GitHub in the contribution editor,
	// keeps their drafts and opens their pull requests; without it the
	// editor offers the file and GitHub's pages only.
	Proposals Proposals
}

// WebhookPath is where GitHub delivers the App's webhooks.
const WebhookPath = "/webhooks/github"

// Server serves the API.
type Server struct {
	runtime      *evaluation.Service
	serves       evaluation.Serves
	members      memberCache
	keys         keyCache
	limiter      Limiter
	baseURL      string
	now          func() time.Time
	log          *slog.Logger
	catalog      *catalog
	metrics      *metrics
	echo         *echo.Echo
	version      string
	markdown     *markdown
	commitURL    string
	sealing      *seal.Key
	sealingDev   bool
	issuer       *credential.Issuer
	stats        *stats.Service
	agentIndex   *agentIndex
	mcp          *mcp.Server
	listsMu      sync.Mutex
	lists        map[string][]byte // signed status lists by list and revoked bits
	readyDetails func(context.Context) map[string]string
	judgeStatus  func() string // the judge's health, a /readyz detail (SetJudgeStatus)
	drafts       drafts        // the registry proposed SIPs are checked against
	sourceBranch string
	proposals    Proposals // signing in to the editor; nil: off
}

// NewServer builds a server; it starts nothing.
func NewServer(cfg Config) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{runtime: cfg.Service, log: log, metrics: newMetrics(), version: cfg.Version, readyDetails: cfg.ReadyDetails,
		baseURL: strings.TrimSuffix(cfg.BaseURL, "/"), now: cfg.Now,
		sealing: cfg.SealingKey, sealingDev: cfg.SealingKeyIsDevelopment, issuer: cfg.Issuer, proposals: cfg.Proposals}
	if s.now == nil {
		s.now = time.Now
	}
	s.limiter = cfg.Limiter
	if s.limiter == nil {
		s.limiter = ratelimit.NewMemory(s.now)
	}
	if s.runtime != nil {
		s.serves = s.runtime.Serves()
	}
	if s.serves.Jobs {
		s.metrics.registry.Register(newJobCollector(s.runtime, s.now))
	}
	s.catalog = &catalog{registry: cfg.Catalog, metrics: s.metrics}
	if s.serves.Agents {
		s.agentIndex = &agentIndex{load: s.runtime.PublicAgents, now: s.now}
	}
	if cfg.Stats != nil {
		s.stats = cfg.Stats
		s.metrics.registry.Register(newOverviewCollector(s))
	}
	s.markdown, s.commitURL, s.sourceBranch = newMarkdown(), cfg.CommitURL, cfg.SourceBranch
	if s.sourceBranch == "" {
		s.sourceBranch = "main"
	}
	if s.serves.Results {
		webPages() // parsed now, so that the first page does not wait
	}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	if len(cfg.TrustedProxies) > 0 {
		// Only the configured ranges: echo would also trust loopback,
		// link-local and private addresses by default.
		opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
		for _, r := range cfg.TrustedProxies {
			opts = append(opts, echo.TrustIPRange(r))
		}
		e.IPExtractor = echo.ExtractIPFromXFFHeader(opts...)
	} else {
		e.IPExtractor = echo.ExtractIPDirect()
	}
	e.Use(s.middleware)

	if cfg.Webhook != nil {
		e.POST(WebhookPath, webhook(cfg.Webhook))
	}
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", echo.WrapHandler(s.metrics.registry))
	e.GET("/api/v1/openapi.json", s.openAPI)
	e.GET("/api/v1/sips", s.listSIPs)
	e.GET("/api/v1/evaluations", s.listEvaluations)
	e.GET("/api/v1/evaluations/:ref", s.getEvaluation)
	e.GET("/api/v1/evaluations/:ref/versions", s.listVersions)
	e.GET("/api/v1/sealing-key", s.sealingKey)
	s.mountContribute(e)
	if s.serves.Agents {
		perMinute := cfg.PublicRate
		if perMinute == 0 {
			perMinute = 20
		}
		// Separate limits: a burst of registrations from one address
		// does not stop its claims, nor the reverse.
		registrations, claims, keys := Limit{"registrations", perMinute, perMinute}, Limit{"claims", perMinute, perMinute}, Limit{"keys", perMinute, perMinute}
		e.POST("/api/v1/agents/register", s.limited(registrations, s.registerAgent))
		e.POST("/api/v1/agents/claim", s.limited(claims, s.claim))
		e.GET("/claim/:token", s.claimPage)
		e.POST("/claim/:token", s.limited(claims, s.claimPage))
		e.GET("/api/v1/agents/me", s.withAgent(s.me))
		e.PATCH("/api/v1/agents/me", s.withAgent(s.patchMe))
		e.PUT("/api/v1/agents/me/identity", s.withAgent(s.putIdentity))
		e.POST("/api/v1/agents/me/keys", s.limited(keys, s.withAgent(s.rotateKey)))
		e.GET("/api/v1/agents/:name", s.profile)
	}
	if s.serves.Results {
		// Verifying costs two canonicalisations (a few milliseconds): a
		// client verifies at most two a second.
		verifications := Limit{"verifications", 120, 120}
		e.POST("/api/v1/evaluations/:ref/register", s.withCaller(s.register))
		e.DELETE("/api/v1/evaluations/:ref/registration", s.withCaller(s.cancel))
		e.POST("/api/v1/evaluations/:ref/start", s.withCaller(s.start))
		e.GET("/api/v1/evaluations/:ref/challenge/:challenge", s.withCaller(s.challenge))
		e.POST("/api/v1/evaluations/:ref/submit", s.withCaller(s.submit))
		e.GET("/api/v1/evaluations/:ref/results", s.listResults)
		e.GET("/api/v1/results/:id", s.getResult)
		e.GET("/api/v1/results/:id/trace", s.getTrace)
		e.GET("/api/v1/results/:id/credential", s.getCredential)
		e.POST("/api/v1/credentials/verify", s.limited(verifications, s.verifyCredential))
		e.GET("/.well-known/did.json", s.didDocument)
		e.GET("/api/v1/credentials/status/revocation/:n", s.statusList)
		e.POST("/api/v1/results/:id/revoke", s.withAgent(s.revokeResult))
		e.POST("/api/v1/agents/me/attestations", s.withAgent(s.attest))
		e.POST("/api/v1/agents/me/credentials", s.limited(verifications, s.withAgent(s.presentCredential)))
		s.mountLegacyVetting(e, cfg.LegacyVetting)
	}
	if s.serves.Results {
		e.GET("/", s.home)
		e.GET("/evaluations", s.evaluationsTable)
		e.GET("/evaluations/:ref", s.evaluationDetail)
		e.GET("/agents", s.agentsDirectory)
		e.GET("/agents/:name", s.agentProfile)
		e.GET("/results/:id", s.resultDetail)
		e.GET("/search", s.search)
		e.GET("/docs/api", s.apiReference)
		e.GET("/docs/quickstart", s.quickstart)
		if s.stats != nil {
			e.GET("/api/v1/evaluations/:ref/stats", s.getEvaluationStats)
			e.GET("/evaluations/:ref/stats", s.evaluationStats)
			e.GET("/stats", s.registryStats)
		}
		static := staticHandler()
		for _, p := range []string{"/static/*", "/favicon.ico", "/favicon.svg"} {
			e.Match([]string{http.MethodGet, http.MethodHead}, p, static)
		}
	}
	if s.serves.Jobs {
		e.GET("/api/v1/evaluations/:ref/jobs/:job", s.withAgent(s.getJob))
		e.GET("/api/v1/evaluations/:ref/results/:id/transcript", s.getTranscript)
	}
	if s.serves.Sessions {
		const ev = "/api/v1/evaluations/:ref"
		e.GET(ev+"/pending-proctor", s.withCaller(s.pendingProctor))
		e.POST(ev+"/proctor/claim", s.withCaller(s.proctorClaim))
		e.POST(ev+"/proctor/submit", s.withCaller(s.proctorSubmit))
		e.GET(ev+"/sessions/:session", s.withAgent(s.getSession))
		e.POST(ev+"/sessions/:session/messages", s.withCaller(s.postMessage))
		e.GET(ev+"/sessions/:session/messages", s.withCaller(s.listMessages))
		e.GET(ev+"/sessions/:session/messages/stream", s.withCaller(s.streamMessages))
		e.GET("/api/v1/agents/me/sessions", s.withAgent(s.mySessions))
	}
	if s.serves.Results {
		s.mountMCP(e)
	}
	s.echo = e
	return s
}

// ServeHTTP makes the server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }
