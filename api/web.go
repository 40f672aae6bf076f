package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// The web pages: server-rendered html/template, one small stylesheet and
// no scripts, so the Content-Security-Policy allows none.

//go:embed templates/web/*.html
var webFS embed.FS

//go:embed static
var staticFS embed.FS

// pageCSP allows the page's own stylesheet and images, nothing that runs.
const pageCSP = "default-src 'none'; style-src 'self'; img-src 'self' https: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

var webFuncs = template.FuncMap{
	"date": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2 Jan 2006")
	},
	"datetime": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	// outcome titles a result that did not pass: Failed, Expired, …
	"outcome":      func(r *evaluation.Result) string { return outcomeTitle(r.EndedAs()) },
	"outcomeTitle": outcomeTitle,
	"percent":      percent,
	// errorsOf reports whether an operation documents an error response.
	"errorsOf": func(rs []docResponse) bool {
		return slices.ContainsFunc(rs, func(r docResponse) bool { return r.Error })
	},
	"duration": duration,
	// share writes a share of 1 as a percentage.
	"share": func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) },
	"short": func(s string) string {
		if len(s) > 7 {
			return s[:7]
		}
		return s
	},
	"points": func(p float64) string {
		if p == float64(int64(p)) {
			return fmt.Sprint(int64(p))
		}
		return fmt.Sprintf("%.1f", p)
	},
	"score": func(v *float64) string {
		if v == nil {
			return "–"
		}
		return fmt.Sprintf("%g", *v)
	},
	// plural writes "1 point", "2 points".
	"plural": func(n any, word string) string {
		var v float64
		switch x := n.(type) {
		case int:
			v = float64(x)
		case float64:
			v = x
		}
		num := fmt.Sprint(n)
		if v == float64(int64(v)) {
			num = fmt.Sprint(int64(v))
		}
		if v == 1 {
			return num + " " + word
		}
		return num + " " + word + "s"
	},
	"sipPath": func(e *registry.Entry) string { return fmt.Sprintf("/evaluations/SIP-%d", e.Number) },
	"typeName": func(t registry.Type) string {
		return strings.ReplaceAll(string(t), "_", " ")
	},
}

// outcomeTitle titles an outcome: Passed, Not graded, …
func outcomeTitle(o evaluation.Outcome) string {
	t := strings.ReplaceAll(string(o), "_", " ")
	if t == "" {
		return ""
	}
	return strings.ToUpper(t[:1]) + t[1:]
}

// webPages are the page templates, each with the layout, parsed when a
// server is built (NewServer), not at package initialisation, which every
// sip command would pay for.
var webPages = sync.OnceValue(func() map[string]*template.Template {
	names, err := fs.Glob(webFS, "templates/web/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		out[strings.TrimSuffix(base, ".html")] = template.Must(template.New("layout.html").Funcs(webFuncs).
			ParseFS(webFS, "templates/web/layout.html", n))
	}
	return out
})

// pageBase is what the layout needs of every page.
type pageBase struct {
	Title   string
	Nav     string // the active section: home, evaluations
	Version string
}

// renderPage writes a page with the headers every page carries.
func (s *Server) renderPage(c echo.Context, status int, name string, data any) error {
	body, err := executePage(name, data)
	if err != nil {
		return err
	}
	return writePage(c, status, body, "")
}

func executePage(name string, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := webPages()[name].Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

func writePage(c echo.Context, status int, body []byte, etag string) error {
	h := c.Response().Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-cache")
	if etag != "" {
		h.Set("ETag", etag)
	}
	return c.HTMLBlob(status, body)
}

// renderedPage is a page rendered for one state of what it shows.
type renderedPage struct {
	fingerprint string
	body        []byte
}

// cachedPage serves a page that shows the same to everyone: it is
// rendered once per state of the registry (the snapshot) and of the data
// it shows (fingerprint, computed from the same queries that feed it),
// so it is never stale, and answered 304 when the browser has it.
func (s *Server) cachedPage(c echo.Context, snap *snapshot, key, fingerprint string, build func() (string, any, error)) error {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%s\x00%s", snap.generation, key, fingerprint, s.version)))
	etag := `W/"` + hex.EncodeToString(sum[:12]) + `"`
	if match := c.Request().Header.Get("If-None-Match"); match != "" && match == etag {
		c.Response().Header().Set("ETag", etag)
		return c.NoContent(http.StatusNotModified)
	}
	snap.cacheMu.Lock()
	p, ok := snap.pages[key]
	snap.cacheMu.Unlock()
	if ok && p.fingerprint == fingerprint {
		return writePage(c, http.StatusOK, p.body, etag)
	}
	name, data, err := build()
	if err != nil {
		return err
	}
	body, err := executePage(name, data)
	if err != nil {
		return err
	}
	snap.cacheMu.Lock()
	if snap.pages == nil {
		snap.pages = map[string]renderedPage{}
	}
	if len(snap.pages) < 256 || ok {
		snap.pages[key] = renderedPage{fingerprint: fingerprint, body: body}
	}
	snap.cacheMu.Unlock()
	return writePage(c, http.StatusOK, body, etag)
}

// countsFingerprint identifies pass counts.
func countsFingerprint(counts map[string]int) string {
	ids := make([]string, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s=%d;", id, counts[id])
	}
	return b.String()
}

// wantsHTML says whether an error should be a page: a browser asking for
// anything outside the JSON API.
func wantsHTML(c echo.Context) bool {
	p := c.Request().URL.Path
	if strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/webhooks/") || p == "/metrics" || p == "/healthz" || p == "/readyz" {
		return false
	}
	return strings.Contains(c.Request().Header.Get("Accept"), "text/html")
}

type errorPage struct {
	pageBase
	Status  int
	Message string
	Hint    string
}

// errorPage renders an error for a browser.
func (s *Server) errorPage(c echo.Context, ae *Error) error {
	title := http.StatusText(ae.Status)
	msg := ae.Message
	if ae.Status == http.StatusNotFound {
		title, msg = "Page not found", "There is no page at this address."
	}
	if ae.Status >= 500 {
		msg = "Something went wrong on our side."
	}
	return s.renderPage(c, ae.Status, "error", errorPage{pageBase: pageBase{Title: title, Version: s.version}, Status: ae.Status, Message: msg, Hint: ae.Hint})
}

// staticHandler serves the stylesheet and the favicon, cacheable.
func staticHandler() echo.HandlerFunc {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.FileServer(http.FS(sub))
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "public, max-age=3600")
		r := c.Request().Clone(c.Request().Context())
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/static")
		if r.URL.Path == "/favicon.svg" || r.URL.Path == "/favicon.ico" {
			r.URL.Path = "/favicon.svg"
		}
		files.ServeHTTP(c.Response(), r)
		return nil
	}
}

// agentNames names the agents of results.
func (s *Server) agentNames(ctx context.Context, rs []*evaluation.Result) (map[string]string, error) {
	seen := map[string]bool{}
	var ids []string
	for _, r := range rs {
		if !seen[r.AgentID] {
			seen[r.AgentID] = true
			ids = append(ids, r.AgentID)
		}
	}
	return s.runtime.AgentNames(ctx, ids)
}
