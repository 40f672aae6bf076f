package api_test

import (
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/registrytest"
	"github.com/sipregistry/sip/registry/stats"
)

// documented says whether a path is part of the API the OpenAPI document
// describes (the web pages and static files are not).
func documented(path string) bool {
	for _, p := range []string{"/api/", "/.well-known/", "/healthz", "/readyz", "/metrics", "/webhooks/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

var echoParam = regexp.MustCompile(`:([a-z]+)`)

// TestEveryRouteDocumented: every API route the server serves (with
// every store and the App's webhook configured) is in the OpenAPI
// document with its method, and every operation the document describes
// is served.
func TestEveryRouteDocumented(t *testing.T) {
	t.Parallel()
	s := backends["sqlite"](t)
	srv := api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(s), Stats: stats.NewService(s.(stats.Source), nil), Logger: slog.New(slog.DiscardHandler),
		Webhook: func(echo.Context) error { return nil }, LegacyVetting: api.LegacyVetting{Sunset: time.Now().AddDate(1, 0, 0)}}, runtimeStores{Agents: s.(registry.AgentStore), Evaluations: s.(registrytest.FullStore), Jobs: s.(jobStore), Sessions: s.(sessionStore)}))
	served := map[string]bool{}
	for _, r := range srv.Routes() {
		method, path := r[0], echoParam.ReplaceAllString(r[1], "{$1}")
		if !documented(path) || method == "echo_route_not_found" {
			continue
		}
		served[method+" "+path] = true
	}
	doc := apitest.Spec(t)
	described := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			described[strings.ToUpper(method)+" "+path] = true
		}
	}
	var missing, extra []string
	for k := range served {
		if !described[k] {
			missing = append(missing, k)
		}
	}
	for k := range described {
		if !served[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 {
		t.Errorf("served but not documented: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("documented but not served: %v", extra)
	}
	for _, want := range []string{"POST /api/v1/agents/me/credentials", "GET /api/v1/evaluations/{ref}/sessions/{session}/messages/stream", "POST /webhooks/github"} {
		if !served[want] || !described[want] {
			t.Errorf("%s: served %v, documented %v", want, served[want], described[want])
		}
	}
	if len(served) < 30 {
		t.Errorf("only %d API routes found: the server was not fully configured", len(served))
	}
}
