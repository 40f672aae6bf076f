package main

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/author"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/credential"
	"github.com/sipregistry/sip/registry/credential/webfetch"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/judge"
	"github.com/sipregistry/sip/registry/proposal"
	"github.com/sipregistry/sip/registry/ratelimit"
	"github.com/sipregistry/sip/registry/seal"
	"github.com/sipregistry/sip/registry/stats"
)

const serveAbout = `
Runs the HTTP API, the web pages and (when configured) the GitHub App on
one port. At start it migrates the database, then syncs --evaluations (by
default the SIPs bundled in this binary) — unless the registry already
follows a git repository (it was synced from a commit by 'sip sync --repo'
or the App), in which case only an explicit --evaluations is synced.

The database is --db, else SIP_DATABASE_URL, else the embedded SQLite file
$XDG_DATA_HOME/sip/registry.db (~/.local/share/sip/registry.db). The address
is --addr, else SIP_ADDR, else 127.0.0.1:8080. SIGINT or SIGTERM shuts the
server down gracefully.

Also read from the environment: SIP_BASE_URL (the public URL, for claim
links), SIP_X_OEMBED_URL (X's oEmbed endpoint, for agent claims), and
SIP_JUDGE_URL, SIP_JUDGE_MODEL, SIP_JUDGE_API_KEY (an OpenAI-compatible
API that grades certifications and free-response answers; without it,
judging jobs wait in the database until one is configured), and
SIP_JUDGE_OUTAGE_WINDOW (how long a job waits out a judge that is down,
default 1h). SIP_BASE_URL is required unless the address is loopback.
--dev-claims lets agents be claimed without X (POST /api/v1/agents/claim
with dev_owner), for trying proctored and live work on one machine; it is
refused unless the address is loopback, SIP_BASE_URL is unset or loopback,
and the GitHub App is off.
The port is bound before the database is opened. Log lines go to standard
error in batches (at most 100 ms late; a warning or an error writes at
once). The heap may grow 128 MiB past what is live before a collection
(GOGC set from the live heap) unless GOGC or GOMEMLIMIT is set.

The GitHub App runs on the same port (POST /webhooks/github) when
SIP_GITHUB_APP_ID is set, with SIP_GITHUB_PRIVATE_KEY (the PEM text) or
SIP_GITHUB_PRIVATE_KEY_FILE, SIP_GITHUB_WEBHOOK_SECRET (required; during a
rotation SIP_GITHUB_WEBHOOK_SECRET_PREVIOUS is accepted too),
SIP_GITHUB_REPOSITORY (owner/name: the repository whose default branch the
registry follows) and SIP_GITHUB_API_URL (GitHub Enterprise Server:
https://HOST/api/v3). See docs/github-app.md.

People sign in to the contribution editor with GitHub (the App's
user-to-server authorization), keep drafts, and open pull requests as
themselves on SIP_GITHUB_REPOSITORY when SIP_GITHUB_CLIENT_ID and
SIP_GITHUB_CLIENT_SECRET (the App's) are set, with SIP_SESSION_KEY (32
random bytes in base64, which seals their tokens; required). See
docs/operations.md.

SafeMolt's vetting endpoints (/api/v1/agents/vetting/…), for agents written
for SafeMolt while a registry moves, are on when SIP_LEGACY_VETTING_SUNSET
names the date they stop working (2027-03-31); SIP_LEGACY_VETTING_SINCE is
when they were deprecated. See docs/migrating-from-safemolt.md.`

func runServe(ctx context.Context, e env, args []string) int {
	flags := newFlagSet("serve", "[--addr HOST:PORT] [--db URL] [--evaluations DIR]", serveAbout)
	addr := flags.String("addr", "", "listen address (default: SIP_ADDR, else 127.0.0.1:8080)")
	db := flags.String("db", "", "database URL (default: SIP_DATABASE_URL, else the embedded SQLite file)")
	evals := flags.String("evaluations", "", "folder of SIPs to sync at start (default: the bundled SIPs)")
	logFormat := flags.String("log-format", "json", "log format: json or text")
	devClaims := flags.Bool("dev-claims", false, "development: claim agents without X (POST /api/v1/agents/claim with dev_owner); loopback only")
	rest, code, ok := parseFlags(flags, e, args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(e.stderr, "sip serve: unexpected argument %q\n", rest[0])
		return exitUsage
	}
	if *logFormat != "json" && *logFormat != "text" {
		fmt.Fprintf(e.stderr, "sip serve: unknown --log-format %q\n", *logFormat)
		return exitUsage
	}
	logs := newLogBuffer(e.stderr)
	defer logs.Flush()
	m := &Main{
		Addr:           firstOf(*addr, e.getenv("SIP_ADDR"), "127.0.0.1:8080"),
		DatabaseURL:    databaseURL(e, *db),
		EvaluationsDir: *evals,
		Logger:         newLogger(logs, *logFormat),
		Stdout:         e.stdout,
		BaseURL:        e.getenv("SIP_BASE_URL"),
		OEmbedURL:      e.getenv("SIP_X_OEMBED_URL"),
		Judge:          judgeFromEnv(e),
		CommitURL:      commitURL(e),
		SourceBranch:   e.getenv("SIP_GITHUB_BRANCH"),
		DevClaims:      *devClaims,
	}
	if v := e.getenv("SIP_JUDGE_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 256 {
			fmt.Fprintf(e.stderr, "sip serve: SIP_JUDGE_CONCURRENCY must be a number from 1 to 256, not %q\n", v)
			return exitUsage
		}
		m.JudgeConcurrency = n
	}
	if v := e.getenv("SIP_JUDGE_OUTAGE_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			fmt.Fprintf(e.stderr, "sip serve: SIP_JUDGE_OUTAGE_WINDOW must be a duration of at least 1m (e.g. 2h), not %q\n", v)
			return exitUsage
		}
		m.JudgeOutageWindow = d
	}
	proxies, err := trustedProxies(e.getenv("SIP_TRUSTED_PROXIES"))
	if err != nil {
		fmt.Fprintf(e.stderr, "sip serve: SIP_TRUSTED_PROXIES: %v\n", err)
		return exitConfig
	}
	m.TrustedProxies = proxies
	app, err := gitHubAppFromEnv(e)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip serve: %v\n", err)
		return exitConfig
	}
	m.GitHub = app
	if m.SignIn, err = signInFromEnv(e); err != nil {
		fmt.Fprintf(e.stderr, "sip serve: %v\n", err)
		return exitConfig
	}
	m.Repository, m.GitHubAPIURL = e.getenv("SIP_GITHUB_REPOSITORY"), e.getenv("SIP_GITHUB_API_URL")
	if m.LegacyVetting, err = legacyVettingFromEnv(e); err != nil {
		fmt.Fprintf(e.stderr, "sip serve: %v\n", err)
		return exitConfig
	}
	if path := e.getenv("SIP_SEALING_KEY_FILE"); path != "" {
		k, err := seal.LoadKeyFile(path)
		if err != nil {
			// The error names the file and the line, never the key.
			fmt.Fprintf(e.stderr, "sip serve: SIP_SEALING_KEY_FILE: %v\n", err)
			return exitConfig
		}
		m.SealingKey = k
	}
	if path := e.getenv("SIP_ISSUER_KEY_FILE"); path != "" {
		keys, err := credential.LoadKeyFile(path)
		if err != nil {
			fmt.Fprintf(e.stderr, "sip serve: SIP_ISSUER_KEY_FILE: %v\n", err)
			return exitConfig
		}
		m.IssuerKeys = keys
	}
	gcCtx, stopTuning := context.WithCancel(ctx)
	defer stopTuning()
	tuneCollector(gcCtx, e.getenv, 10*time.Second)
	if err := m.Run(ctx); err != nil {
		// After the log's last lines, and through the buffer: its flush
		// timer may still be writing to stderr.
		fmt.Fprintf(logs, "sip serve: %v\n", err)
		logs.Flush()
		var invalid *registry.ValidationError
		switch {
		case errors.As(err, &invalid):
			return exitData
		case errors.Is(err, os.ErrNotExist):
			return exitNoInput
		case errors.Is(err, errListen), errors.Is(err, errApp), errors.Is(err, errBaseURL), errors.Is(err, errDevClaims):
			return exitConfig
		}
		return exitForStoreError(err)
	}
	return exitOK
}

// judgeFromEnv configures the LLM judge from SIP_JUDGE_URL, SIP_JUDGE_MODEL
// and SIP_JUDGE_API_KEY; without a URL there is no judge.
func judgeFromEnv(e env) *judge.Client {
	url := e.getenv("SIP_JUDGE_URL")
	if url == "" {
		return nil
	}
	return &judge.Client{URL: url, Model: firstOf(e.getenv("SIP_JUDGE_MODEL"), "gpt-4o-mini"), APIKey: e.getenv("SIP_JUDGE_API_KEY"),
		HTTP: &http.Client{Timeout: 90 * time.Second}}
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// newLogger writes records to buf in format, and buf at once after any
// record at warning level or above.
func newLogger(buf *logBuffer, format string) *slog.Logger {
	if format == "text" {
		return slog.New(flushingHandler{slog.NewTextHandler(buf, nil), buf})
	}
	return slog.New(flushingHandler{newJSONLogHandler(buf), buf})
}

var (
	errListen = errors.New("cannot listen")
	errApp    = errors.New("the GitHub App cannot start")
)

// Main is the whole server program, so tests can run it in-process on a
// free port with a temporary database.
type Main struct {
	Addr           string
	DatabaseURL    string
	EvaluationsDir string // "" means the bundled SIPs
	BaseURL        string
	OEmbedURL      string        // X's oEmbed endpoint, for agent claims (api.DefaultOEmbedURL when empty)
	Judge          *judge.Client // grades certifications and free responses; nil: jobs wait
	// JudgeConcurrency is how many jobs a replica judges at once (16 when 0).
	JudgeConcurrency int
	// JudgeOutageWindow is how long a job waits out a judge that is down
	// before it fails (an hour when 0).
	JudgeOutageWindow time.Duration
	// TrustedProxies are the load balancers whose X-Forwarded-For is
	// believed (SIP_TRUSTED_PROXIES).
	TrustedProxies []*net.IPNet
	GitHub         *bot.Config // the GitHub App (Store and Logger are set by Run); nil: off
	CommitURL      string      // links versions' commits on the pages ({sha}); "" for none
	SourceBranch   string      // the repository's default branch, for the editor (SIP_GITHUB_BRANCH; main)
	// SignIn lets people sign in to the editor with GitHub and open pull
	// requests as themselves on Repository (owner/name) through
	// GitHubAPIURL (GitHub's when empty); nil: off.
	SignIn       *SignIn
	Repository   string
	GitHubAPIURL string
	// SealingKey opens benchmarks' sealed answers (SIP_SEALING_KEY_FILE).
	// Without one, and with the App off, sip's public development key is
	// used, so the bundled benchmark grades out of the box.
	SealingKey *seal.Key
	// IssuerKeys sign passes as credentials (SIP_ISSUER_KEY_FILE), the
	// last one signing. Without them, and with the App off, a key is made
	// once and kept in the database.
	IssuerKeys []credential.Key
	Logger     *slog.Logger
	Stdout     io.Writer
	// LegacyVetting switches SafeMolt's vetting endpoints on until its
	// sunset (SIP_LEGACY_VETTING_SUNSET).
	LegacyVetting api.LegacyVetting
	// DevClaims lets agents be claimed without X (--dev-claims), so that
	// proctored and live attempts can be tried on one machine. Run refuses
	// it unless the server is a development one: listening on loopback,
	// SIP_BASE_URL unset or loopback, and the GitHub App off.
	DevClaims bool

	// URL is the address the server listens on, set once it listens.
	URL       string
	readyOnce sync.Once
	ready     chan struct{}
}

// Ready is closed once the server accepts requests.
func (m *Main) Ready() <-chan struct{} {
	m.readyOnce.Do(func() { m.ready = make(chan struct{}) })
	return m.ready
}

// Run migrates, syncs, and serves until ctx ends, then shuts down
// gracefully (in-flight requests get 15 seconds).
func (m *Main) Run(ctx context.Context) error {
	m.Ready()
	log := m.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := checkBaseURL(m.Addr, m.BaseURL); err != nil {
		return err
	}
	if err := m.checkDevClaims(); err != nil {
		return err
	}
	// Bind first: a taken port fails before the database is touched.
	ln, err := listen(m.Addr)
	if err != nil {
		return err
	}
	defer ln.Close() // Serve closes it too; this covers the returns before Serve
	m.URL = "http://" + ln.Addr().String()
	st, err := openStore(ctx, m.DatabaseURL, true)
	if err != nil {
		return fmt.Errorf("%s: %w", describeDatabase(m.DatabaseURL), err)
	}
	defer st.Close()
	warnPermissions(log, m.DatabaseURL)
	if err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("%s: %w", describeDatabase(m.DatabaseURL), err)
	}
	if err := m.syncAtStart(ctx, st, log); err != nil {
		return err
	}

	key, dev, err := m.sealingKey(log)
	if err != nil {
		return err
	}
	var app *bot.App
	if m.GitHub != nil {
		cfg := *m.GitHub
		cfg.Store, cfg.Logger = st, log.With("component", "github")
		if key != nil {
			cfg.SealingKey = key
		}
		if app, err = bot.New(cfg); err != nil {
			return fmt.Errorf("%w: %v", errApp, err)
		}
	}
	// The key of the digests in execution records: made once, kept in the
	// database, the same on every replica.
	candidate := make([]byte, 32)
	if _, err := rand.Read(candidate); err != nil {
		return err
	}
	recordKey, err := st.Secret(ctx, "record-digest", candidate)
	if err != nil {
		return fmt.Errorf("record key: %w", err)
	}
	if m.BaseURL == "" {
		// Links must be absolute and never come from a request's Host
		// header: without SIP_BASE_URL (allowed on loopback only) they
		// name the address we listen on.
		m.BaseURL = m.URL
		log.Info("SIP_BASE_URL is not set; links name the listening address", "url", m.URL)
	}
	issuer, err := m.issuer(ctx, st, log)
	if err != nil {
		return err
	}
	// The evaluation service: every rule an agent meets, whatever the door
	// (the HTTP API, the judge worker, the sweeper).
	ec := evaluation.Config{Versions: st, Agents: st, Attempts: st, Challenges: st, Results: st, Revocations: st, Presented: st, Jobs: st, Judging: st,
		Sessions: st, Messages: st, Proctoring: st, Seats: st, JudgeConfigured: m.Judge != nil,
		Posts:   &api.OEmbed{URL: m.OEmbedURL, Client: &http.Client{Timeout: 10 * time.Second}},
		Issuers: webfetch.NewIssuers(webfetch.Client{}),
		Build:   sipVersion(), RecordKey: recordKey, Credentials: webCredentialChecker(webfetch.Client{}, time.Now),
		DevelopmentClaims: m.DevClaims}
	if m.DevClaims {
		log.Warn("--dev-claims: agents may be claimed without X (dev_owner); this registry is for development only")
	}
	if key != nil { // a nil *seal.Key is not a nil Opener
		ec.Key = key
	}
	svc := evaluation.New(ec)
	// The API takes services over the store, never the store: the
	// registry's catalogue, the evaluation service, the statistics.
	cfg := api.Config{Catalog: registry.NewCatalog(st), Stats: stats.NewService(st, time.Now), Service: svc,
		Logger: log, Version: sipVersion(), BaseURL: m.BaseURL, CommitURL: m.CommitURL, SourceBranch: m.SourceBranch, TrustedProxies: m.TrustedProxies,
		SealingKey: key, SealingKeyIsDevelopment: dev, Issuer: issuer, LegacyVetting: m.LegacyVetting}
	if app != nil {
		cfg.Webhook, cfg.ReadyDetails = app.Webhook, app.ReadyDetails
	}
	if m.SignIn != nil {
		if cfg.Proposals, err = m.proposals(st); err != nil {
			return err
		}
		log.Info("people sign in to the editor with GitHub", "repository", m.Repository)
	}
	// Rate limits live where every replica sees them: in PostgreSQL. A
	// SQLite database has one server, which keeps them in memory.
	if shared, ok := st.(ratelimit.Counter); ok {
		cfg.Limiter = ratelimit.NewShared(shared, time.Now)
	}
	srv := api.NewServer(cfg)
	if app != nil {
		srv.Registry().Register(app.Collectors()...)
		appCtx, stopApp := context.WithCancel(context.WithoutCancel(ctx))
		appDone := make(chan struct{})
		go func() { defer close(appDone); app.Run(appCtx) }()
		// Deferred before the HTTP shutdown below returns: webhooks stop
		// first, then in-flight deliveries finish.
		defer func() { stopApp(); <-appDone }()
	}
	worker := &evaluation.Worker{Service: svc, Log: log.With("component", "judge"), Concurrency: m.JudgeConcurrency,
		OutageWindow: m.JudgeOutageWindow}
	if m.Judge != nil {
		worker.Judge = m.Judge
		srv.Registry().Register(judgeCollector(worker))
	}
	logJudge(log, m.Judge, cmp.Or(m.JudgeOutageWindow, time.Hour))
	srv.SetJudgeStatus(judgeStatus(worker))
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	workDone := make(chan struct{})
	go func() { defer close(workDone); worker.Run(workCtx) }()
	// The sweeper ends attempts past their deadline and sessions nobody
	// graded; every replica may run one.
	sweeper := &evaluation.Sweeper{Service: svc, Log: log.With("component", "sweeper")}
	sweepDone := make(chan struct{})
	go func() { defer close(sweepDone); sweeper.Run(workCtx) }()
	defer func() { stopWork(); <-workDone; <-sweepDone }()
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("serving", "url", m.URL, "database", describeDatabase(m.DatabaseURL), "version", sipVersion())
	if m.Stdout != nil {
		fmt.Fprintf(m.Stdout, "sip is serving at %s (open it in a browser; the API is at %s/api/v1/evaluations)\n", m.URL, m.URL)
	}
	close(m.ready)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// proposals is the editor's service for people signed in with GitHub.
func (m *Main) proposals(st store) (*proposal.Service, error) {
	owner, name, ok := strings.Cut(m.Repository, "/")
	if !ok || owner == "" || name == "" {
		return nil, fmt.Errorf("%w: sign-in needs the repository as owner/name, not %q", errApp, m.Repository)
	}
	gh := &author.Client{APIURL: m.GitHubAPIURL, WebURL: author.WebURLFor(m.GitHubAPIURL), ClientID: m.SignIn.ClientID,
		ClientSecret: m.SignIn.ClientSecret, HTTP: &http.Client{Timeout: 30 * time.Second}}
	origin := gh.WebURL
	if u, err := url.Parse(gh.WebURL); err == nil {
		origin = u.Scheme + "://" + u.Host
	}
	svc, err := proposal.New(proposal.Config{Store: st, GitHub: gh, Key: m.SignIn.Key, Owner: owner, Repo: name, SignInOrigin: origin})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errApp, err)
	}
	return svc, nil
}

// sealingKey is the key that opens sealed answers: SIP_SEALING_KEY_FILE's;
// else, with the GitHub App off, sip's development key (public, so a
// fresh `make run` grades the bundled benchmark), said loudly; else none.
// A registry that governs a repository never falls back to a public key:
// answers sealed to it would be readable by anyone.
func (m *Main) sealingKey(log *slog.Logger) (_ *seal.Key, development bool, _ error) {
	if m.SealingKey != nil {
		log.Info("sealing key loaded", "recipient", m.SealingKey.Recipient())
		return m.SealingKey, false, nil
	}
	if m.GitHub != nil {
		log.Warn("SIP_SEALING_KEY_FILE is not set: benchmarks with sealed answers cannot be checked or taken on this registry")
		return nil, false, nil
	}
	k, err := seal.ParseKey(evaluations.DevelopmentSealingKey)
	if err != nil {
		return nil, false, fmt.Errorf("the development sealing key: %w", err)
	}
	log.Warn("SIP_SEALING_KEY_FILE is not set: using sip's development sealing key, which is PUBLIC; the answers of benchmarks sealed to it (the bundled ones) are not secret. A real registry makes its own: sip seal --new-key FILE",
		"recipient", k.Recipient())
	return k, true, nil
}

// issuer is the registry as the issuer of credentials: its keys are
// SIP_ISSUER_KEY_FILE's; else, with the GitHub App off, a key made on
// first run and kept in the database (every replica shares it), said
// loudly; else none, and no credentials.
func (m *Main) issuer(ctx context.Context, st store, log *slog.Logger) (*credential.Issuer, error) {
	keys := m.IssuerKeys
	switch {
	case len(keys) > 0:
	case m.GitHub != nil:
		log.Warn("SIP_ISSUER_KEY_FILE is not set: this registry issues no credentials")
		return nil, nil
	default:
		seed := make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, err
		}
		kept, err := st.Secret(ctx, "issuer-ed25519-seed", seed)
		if err != nil {
			return nil, fmt.Errorf("issuer key: %w", err)
		}
		k, err := credential.KeyFromSeed(kept)
		if err != nil {
			return nil, fmt.Errorf("issuer key: %w", err)
		}
		keys = []credential.Key{k}
		log.Warn("SIP_ISSUER_KEY_FILE is not set: credentials are signed with a key this registry made and keeps in its database, so whoever reads the database can sign them. A real registry keeps its key apart: openssl genpkey -algorithm ed25519 -out issuer.pem, then SIP_ISSUER_KEY_FILE=issuer.pem")
	}
	iss, err := credential.NewIssuer(m.BaseURL, "SIP Registry", keys)
	if err != nil {
		return nil, err
	}
	log.Info("issuing credentials", "issuer", iss.DID, "key", keys[len(keys)-1].ID)
	return iss, nil
}

// webCredentialChecker rechecks recorded external credentials when they
// meet a prerequisite: keys of trusted issuers fetched from their did:web
// documents, status lists fetched and cached for a minute.
func webCredentialChecker(web webfetch.Client, now func() time.Time) *credential.Checker {
	return &credential.Checker{Keys: &credential.WebResolver{Fetch: web}, Now: now,
		Status: &credential.CachedStatus{Source: &credential.WebStatus{Fetch: web}, TTL: time.Minute, Now: now}}
}

// syncAtStart syncs the configured SIPs, unless the registry follows git
// and no folder was named.
func (m *Main) syncAtStart(ctx context.Context, st store, log *slog.Logger) error {
	var src registry.Source
	if m.EvaluationsDir == "" {
		state, err := st.SyncState(ctx)
		if err != nil {
			return err
		}
		if state.CommitSHA != "" {
			log.Info("registry follows git; not syncing the bundled SIPs", "commit", state.CommitSHA, "source", state.Source)
			return nil
		}
		files, err := registry.ReadFS(evaluations.FS, ".", "evaluations")
		if err != nil {
			return err
		}
		src = registry.Source{Files: files, Name: "bundled SIPs (sip " + sipVersion() + ")"}
	} else {
		var err error
		if src, err = dirSource(m.EvaluationsDir); err != nil {
			return err
		}
	}
	rep, err := registry.Sync(ctx, st, src, time.Now())
	if err != nil {
		if rep != nil {
			for _, p := range rep.Problems {
				log.Error("invalid SIP", "path", p.Path, "line", p.Line, "rule", p.Rule, "message", p.Message)
			}
		}
		return fmt.Errorf("sync %s: %w", src.Name, err)
	}
	log.Info("synced", "source", src.Name, "applied", rep.Applied, "added", len(rep.Added), "changed", len(rep.Changed),
		"deprecated", len(rep.Deprecated), "unchanged", len(rep.Unchanged))
	return nil
}

// trustedProxies parses a comma-separated list of addresses and CIDR
// ranges, e.g. "10.0.0.0/8, 192.0.2.7".
func trustedProxies(v string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			ip := net.ParseIP(part)
			if ip == nil {
				return nil, fmt.Errorf("%q is neither an address nor a CIDR range", part)
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(part)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a CIDR range", part)
		}
		out = append(out, n)
	}
	return out, nil
}
