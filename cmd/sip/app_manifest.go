package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"
)

const appAbout = `
Creates the registry's GitHub App with GitHub's manifest flow, and keeps its
credentials. 'sip app create' serves a page on --listen; open it in a
browser, confirm on GitHub, and GitHub sends you back here with a code that
sip exchanges for the App's id, private key and webhook secret. They are
written to --out (a folder, 0700): github-app.pem and sip-github.env (both
0600). Nothing secret is printed.

--url is the public URL of your sip serve (SIP_BASE_URL): the App's
webhooks go to URL/webhooks/github. --org creates the App in an
organisation instead of your account. For GitHub Enterprise Server, set
--github https://HOST and SIP_GITHUB_API_URL=https://HOST/api/v3.

The browser must reach --listen: run this on your own machine (the
default, 127.0.0.1), or listen where your browser can reach it.`

// appManifest is the App sip registers: the settings of
// docs/github-app-manifest.json, with its webhook on the registry and its
// redirect back to this command.
func appManifest(name, baseURL, redirect string) map[string]any {
	return map[string]any{
		"name":            name,
		"url":             "https://github.com/sipregistry/sip",
		"description":     "Validates SIP pull requests line by line, enforces the maintainers' approval policy, and syncs the SIP registry when they merge.",
		"hook_attributes": map[string]any{"url": strings.TrimSuffix(baseURL, "/") + "/webhooks/github", "active": true},
		"redirect_url":    redirect,
		// Where GitHub sends people back when they sign in to the editor
		// (used once sign-in is configured; docs/operations.md).
		"callback_urls": []string{strings.TrimSuffix(baseURL, "/") + "/contribute/callback"},
		"public":        false,
		"default_permissions": map[string]string{
			"checks": "write", "contents": "read", "pull_requests": "write", "issues": "write", "metadata": "read", "members": "read",
		},
		"default_events": []string{"check_run", "check_suite", "issue_comment", "merge_group", "pull_request", "pull_request_review", "push"},
	}
}

var manifestPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("manifest").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Create the SIP registry's GitHub App</title></head>
<body>
<h1>Create the GitHub App</h1>
<p>GitHub will show the App's settings: the webhook goes to <code>{{.Hook}}</code>. Confirm there, and GitHub sends you back here.</p>
<form id="create" method="post" action="{{.Action}}">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<button type="submit">Create the App on GitHub</button>
</form>
</body></html>
`))
})

var donePage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("done").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>GitHub App created</title></head>
<body>
<h1>The App {{.Name}} is created</h1>
<p>Its credentials are saved. Next, <a href="{{.Install}}">install it on your repository of SIPs</a>, then go back to the terminal for the remaining steps.</p>
</body></html>
`))
})

// appCredentials is what the code converts into, as kept on disk.
type appCredentials struct {
	ID                  int64
	Slug, Name, HTMLURL string
	PEMPath, EnvPath    string
	webhookSecret, pem  string
}

func runApp(ctx context.Context, e env, args []string) int {
	flags := newFlagSet("app", "create --url URL [--org ORG] [--out DIR] [--listen HOST:PORT]", appAbout)
	base := flags.String("url", "", "the public URL of your sip serve (SIP_BASE_URL); required")
	org := flags.String("org", "", "create the App in this organisation (default: your account)")
	out := flags.String("out", ".", "folder for github-app.pem and sip-github.env")
	listenAddr := flags.String("listen", "127.0.0.1:0", "where this command serves the page your browser opens")
	web := flags.String("github", "https://github.com", "GitHub's web address (GitHub Enterprise Server: https://HOST)")
	name := flags.String("name", "SIP registry", "the App's name (unique on GitHub)")
	rest, code, ok := parseFlags(flags, e, args)
	if !ok {
		return code
	}
	if len(rest) != 1 || rest[0] != "create" {
		fmt.Fprintln(e.stderr, "sip app: the subcommand is create (sip app create --url https://sip.example.org)")
		return exitUsage
	}
	if err := checkBaseURL("0.0.0.0:0", *base); err != nil || *base == "" {
		fmt.Fprintln(e.stderr, "sip app create: --url must be the public http(s) URL of your sip serve, e.g. https://sip.example.org")
		return exitUsage
	}
	pemPath, envPath := filepath.Join(*out, "github-app.pem"), filepath.Join(*out, "sip-github.env")
	for _, p := range []string{pemPath, envPath} {
		if _, err := os.Stat(p); err == nil {
			fmt.Fprintf(e.stderr, "sip app create: %s exists: choose another --out, or move it away\n", p)
			return exitUsage
		}
	}
	apiURL := e.getenv("SIP_GITHUB_API_URL")
	gh := github.NewClient(&http.Client{Timeout: 30 * time.Second})
	if apiURL != "" {
		u, err := url.Parse(strings.TrimSuffix(apiURL, "/") + "/")
		if err != nil || u.Host == "" {
			fmt.Fprintf(e.stderr, "sip app create: SIP_GITHUB_API_URL %q is not a URL\n", apiURL)
			return exitConfig
		}
		gh.BaseURL = u
	}
	ln, err := listen(*listenAddr)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip app create: %v\n", err)
		return exitConfig
	}
	defer ln.Close()
	local := "http://" + ln.Addr().String()
	stateBytes := make([]byte, 24)
	if _, err := rand.Read(stateBytes); err != nil {
		fmt.Fprintf(e.stderr, "sip app create: %v\n", err)
		return exitInternal
	}
	state := hex.EncodeToString(stateBytes)
	manifest, err := json.Marshal(appManifest(*name, *base, local+"/callback"))
	if err != nil {
		fmt.Fprintf(e.stderr, "sip app create: %v\n", err)
		return exitInternal
	}
	action := strings.TrimSuffix(*web, "/") + "/settings/apps/new"
	if *org != "" {
		action = strings.TrimSuffix(*web, "/") + "/organizations/" + url.PathEscape(*org) + "/settings/apps/new"
	}
	action += "?state=" + state

	done := make(chan appCredentials, 1)
	failed := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		manifestPage().Execute(w, map[string]string{"Action": action, "Manifest": string(manifest),
			"Hook": strings.TrimSuffix(*base, "/") + "/webhooks/github"})
	})
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		got := r.URL.Query().Get("state")
		if subtle.ConstantTimeCompare([]byte(got), []byte(state)) != 1 {
			http.Error(w, "This request did not come from the page sip served (its state does not match). Start again from "+local, http.StatusBadRequest)
			return
		}
		code := r.URL.Query().Get("code")
		if code == "" || len(code) > 200 {
			http.Error(w, "GitHub sent no code.", http.StatusBadRequest)
			return
		}
		creds, err := convertManifest(r.Context(), gh, code, pemPath, envPath)
		if err != nil {
			http.Error(w, "The App could not be set up: "+err.Error()+". See the terminal.", http.StatusBadGateway)
			select {
			case failed <- err:
			default:
			}
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		donePage().Execute(w, map[string]string{"Name": creds.Name, "Install": creds.HTMLURL + "/installations/new"})
		select {
		case done <- creds:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Fprintf(e.stdout, "Open %s in your browser to create the GitHub App (Ctrl-C to stop).\n", local)

	select {
	case <-ctx.Done():
		fmt.Fprintln(e.stderr, "sip app create: stopped before GitHub sent the App back; nothing was saved")
		return exitUnavailable
	case err := <-failed:
		fmt.Fprintf(e.stderr, "sip app create: %v\n", err)
		return exitUnavailable
	case c := <-done:
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
		fmt.Fprintf(e.stdout, `
Created the GitHub App %q (id %d).
Saved its private key to %s and its settings to %s (both readable by you only).

Next:
  1. Install the App on your repository of SIPs: %s/installations/new
  2. Add SIP_GITHUB_REPOSITORY=owner/name (that repository) to %s.
  3. Start sip with those settings, e.g.
       set -a; . %s; set +a; sip serve --addr 0.0.0.0:8080
     (SIP_BASE_URL=%s; the App also needs SIP_SEALING_KEY_FILE and
     SIP_ISSUER_KEY_FILE: see docs/operations.md).
  4. Keep %s and %s secret; delete them once they are in your secret store.
`, c.Name, c.ID, c.PEMPath, c.EnvPath, c.HTMLURL, c.EnvPath, c.EnvPath, *base, c.PEMPath, c.EnvPath)
		return exitOK
	}
}

// convertManifest exchanges the code for the App's credentials and writes
// them, readable by their owner only, refusing to overwrite anything.
func convertManifest(ctx context.Context, gh *github.Client, code, pemPath, envPath string) (appCredentials, error) {
	cfg, _, err := gh.Apps.CompleteAppManifest(ctx, code)
	if err != nil {
		var ge *github.ErrorResponse
		if errors.As(err, &ge) && ge.Response != nil && ge.Response.StatusCode == http.StatusNotFound {
			return appCredentials{}, errors.New("GitHub does not know the code (it is used once and expires after an hour): start again")
		}
		return appCredentials{}, fmt.Errorf("exchanging the code with GitHub: %w", err)
	}
	c := appCredentials{ID: cfg.GetID(), Slug: cfg.GetSlug(), Name: cfg.GetName(), HTMLURL: cfg.GetHTMLURL(),
		webhookSecret: cfg.GetWebhookSecret(), pem: cfg.GetPEM()}
	if c.ID <= 0 || c.pem == "" || c.webhookSecret == "" {
		return appCredentials{}, errors.New("GitHub's answer lacks the App's id, private key or webhook secret")
	}
	if c.HTMLURL == "" {
		c.HTMLURL = "https://github.com/apps/" + c.Slug
	}
	if err := os.MkdirAll(filepath.Dir(pemPath), 0o700); err != nil {
		return appCredentials{}, err
	}
	abs, err := filepath.Abs(pemPath)
	if err != nil {
		return appCredentials{}, err
	}
	if err := writeSecretFile(pemPath, []byte(c.pem)); err != nil {
		return appCredentials{}, err
	}
	env := fmt.Sprintf("# The GitHub App %q, created by sip app create.\nSIP_GITHUB_APP_ID=%d\nSIP_GITHUB_PRIVATE_KEY_FILE=%s\nSIP_GITHUB_WEBHOOK_SECRET=%s\n",
		c.Name, c.ID, abs, c.webhookSecret)
	if err := writeSecretFile(envPath, []byte(env)); err != nil {
		return appCredentials{}, err
	}
	c.PEMPath, c.EnvPath = pemPath, envPath
	return c, nil
}

// writeSecretFile creates path 0600 with data; it never overwrites.
func writeSecretFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
