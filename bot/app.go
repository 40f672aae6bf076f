// Package bot is the GitHub App: it receives webhooks into a durable
// inbox, checks SIP pull requests (the "SIP validation" and "SIP
// approval" check runs, one comment kept up to date, labels), and syncs
// the registry when the default branch moves. Workers on every replica
// share the inbox in the database; all work is level-triggered (it reads
// the current state from GitHub), so duplicates and reordering are
// harmless.
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/metric"
)

// Store is what the App needs of the registry database.
type Store interface {
	registry.Store
	inbox.Store
}

// Config configures the App.
type Config struct {
	AppID      int64
	PrivateKey []byte // PEM
	// WebhookSecrets verify X-Hub-Signature-256. The first is current;
	// more are accepted while a secret is rotated. The App refuses to
	// start without one.
	WebhookSecrets []string
	// APIURL is GitHub's REST API (DefaultAPIURL, or https://HOST/api/v3
	// for GitHub Enterprise Server, or a test server).
	APIURL string
	// Repository ("owner/name") is the repository the registry follows:
	// a push to its default branch syncs the registry. Empty: no syncs.
	Repository string
	// Dir is the folder of SIPs in repositories (default "evaluations").
	Dir   string
	Store Store
	// Transport carries every request to GitHub (http.DefaultTransport
	// when nil).
	Transport http.RoundTripper
	Logger    *slog.Logger
	// Workers process deliveries at once in this process (default 4).
	Workers int
	// Lease is how long a worker holds a delivery before another may
	// take it over (default 5 minutes).
	Lease time.Duration
	// MaxAttempts before a delivery is given up as dead (default 10).
	MaxAttempts int
	// Backoff is the wait before attempt n+1 after n failed (default:
	// exponential from 5 s, capped at 15 minutes, with jitter).
	Backoff func(n int) time.Duration
	// ReconcileEvery is the period of reconciliation (default 10
	// minutes; it also runs at start).
	ReconcileEvery time.Duration
	// Poll is how often idle workers look for due deliveries that no
	// local webhook woke them for (default 1 s).
	Poll time.Duration
	Now  func() time.Time
	// SealingKey, when set, is the registry's sealing key: the validation
	// check requires every sealed benchmark answer to open with it to one
	// of its choices (sealed-answer-invalid), without printing it.
	SealingKey registry.Opener
}

// ErrNoSecret is returned by New when no webhook secret is configured:
// without one, go-github would accept unsigned payloads.
var ErrNoSecret = errors.New("the GitHub App needs a webhook secret (SIP_GITHUB_WEBHOOK_SECRET)")

// App is the GitHub App.
type App struct {
	cfg     Config
	store   Store
	gh      *clients
	log     *slog.Logger
	now     func() time.Time
	wake    chan struct{}
	metrics *botMetrics
	docs    docCache
	// handleFn and reconcileFn are a.handle and a.Reconcile; tests
	// replace them to reach the worker's failure paths.
	handleFn    func(context.Context, *inbox.Delivery) error
	reconcileFn func(context.Context) error
}

// New checks the configuration and builds the App; it starts nothing.
func New(cfg Config) (*App, error) {
	secrets := cfg.WebhookSecrets[:0:0]
	for _, s := range cfg.WebhookSecrets {
		if strings.TrimSpace(s) != "" {
			secrets = append(secrets, s)
		}
	}
	if len(secrets) == 0 {
		return nil, ErrNoSecret
	}
	cfg.WebhookSecrets = secrets
	if cfg.AppID <= 0 {
		return nil, errors.New("the GitHub App needs its numeric App ID (SIP_GITHUB_APP_ID)")
	}
	if cfg.Store == nil {
		return nil, errors.New("the GitHub App needs a store")
	}
	if cfg.Repository != "" {
		if o, n, ok := strings.Cut(cfg.Repository, "/"); !ok || o == "" || n == "" || strings.Contains(n, "/") {
			return nil, fmt.Errorf("repository %q: write it as owner/name", cfg.Repository)
		}
	}
	if cfg.Dir == "" {
		cfg.Dir = "evaluations"
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 5 * time.Minute
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 10
	}
	if cfg.Backoff == nil {
		cfg.Backoff = defaultBackoff
	}
	if cfg.ReconcileEvery <= 0 {
		cfg.ReconcileEvery = 10 * time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := newBotMetrics(cfg.Store)
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	gh, err := newClients(cfg.AppID, cfg.PrivateKey, cfg.APIURL, m.transport(tr))
	if err != nil {
		return nil, err
	}
	a := &App{cfg: cfg, store: cfg.Store, gh: gh, log: log, now: cfg.Now, wake: make(chan struct{}, 1), metrics: m}
	a.handleFn, a.reconcileFn = a.handle, a.Reconcile
	return a, nil
}

// defaultBackoff waits 5 s, 10 s, 20 s … up to 15 minutes, ±20 %.
func defaultBackoff(n int) time.Duration {
	d := 5 * time.Second << min(n-1, 10)
	d = min(d, 15*time.Minute)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// Run works the inbox and reconciles until ctx ends; in-flight work gets
// to finish (a delivery cut short is taken again when its lease ends).
func (a *App) Run(ctx context.Context) {
	done := make(chan struct{})
	for range a.cfg.Workers {
		go func() { a.work(ctx); done <- struct{}{} }()
	}
	go func() { a.reconcileLoop(ctx); done <- struct{}{} }()
	for range a.cfg.Workers + 1 {
		<-done
	}
}

// Collectors are the App's Prometheus metrics, for the server's /metrics.
func (a *App) Collectors() []metric.Collector { return a.metrics.collectors() }

func (a *App) notify() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}
