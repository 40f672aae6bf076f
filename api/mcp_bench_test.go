package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/registrytest"
)

// mcpBenchServer is sip serve's API on SQLite with the bundled SIPs, and
// the key of one agent.
func mcpBenchServer(b *testing.B) (*httptest.Server, string) {
	s := backends["sqlite"](b)
	files, err := registry.ReadFS(evaluations.FS, ".", "evaluations")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := registry.Sync(b.Context(), s, registry.Source{Files: files, Commit: "c1", Name: "bench"}, time.Now()); err != nil {
		b.Fatal(err)
	}
	cfg := withRuntime(api.Config{Catalog: registry.NewCatalog(s), Logger: slog.New(slog.DiscardHandler), SealingKey: bundledKey(b), SealingKeyIsDevelopment: true},
		runtimeStores{Agents: s.(registry.AgentStore), Evaluations: s.(registrytest.FullStore), Jobs: s.(jobStore), Sessions: s.(sessionStore)})
	srv := httptest.NewServer(api.NewServer(cfg))
	b.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/api/v1/agents/register", "application/json", strings.NewReader(`{"name":"bench-agent"}`))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var r registered
	if err := jsonDecode(resp, &r); err != nil || r.Agent.APIKey == "" {
		b.Fatalf("register: %v %+v", err, r)
	}
	return srv, r.Agent.APIKey
}

func mcpSession(b *testing.B, url, key string) *sdk.ClientSession {
	k := key
	tr := &sdk.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: keyTransport{&k, http.DefaultTransport}}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkMCPToolCall: what an MCP tool call costs over the HTTP call it
// wraps, both over real HTTP with keep-alive, one after the other, 2,000
// of each: get_me against GET /api/v1/agents/me and register_for_evaluation
// (the open registration) against POST …/register. It reports each p50 and
// the difference.
func BenchmarkMCPToolCall(b *testing.B) {
	srv, key := mcpBenchServer(b)
	cs := mcpSession(b, srv.URL, key)
	defer cs.Close()
	client := &http.Client{}
	for _, c := range []struct {
		name, tool, method, path string
		args                     map[string]any
	}{
		{"get_me", "get_me", "GET", "/api/v1/agents/me", nil},
		{"register", "register_for_evaluation", "POST", "/api/v1/evaluations/poaw/register", map[string]any{"ref": "poaw"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var viaHTTP, viaMCP []time.Duration
			for range b.N {
				for range 2000 {
					req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
					req.Header.Set("Authorization", "Bearer "+key)
					t0 := time.Now()
					resp, err := client.Do(req)
					if err != nil || resp.StatusCode >= 300 {
						b.Fatalf("HTTP: %v %v", err, resp)
					}
					drain(resp)
					viaHTTP = append(viaHTTP, time.Since(t0))
					t0 = time.Now()
					res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
					if err != nil || res.IsError {
						b.Fatalf("MCP: %v %v", err, res)
					}
					viaMCP = append(viaMCP, time.Since(t0))
				}
			}
			h, m := p50(viaHTTP), p50(viaMCP)
			b.ReportMetric(float64(h.Microseconds()), "http-p50-µs")
			b.ReportMetric(float64(m.Microseconds()), "mcp-p50-µs")
			b.ReportMetric(float64((m - h).Microseconds()), "added-p50-µs")
		})
	}
}

// BenchmarkMCPSessions: 200 MCP sessions connect at once, each calls a
// tool, and all stay open; it reports the heap they hold (client and
// server, in this one process) per session and the heap left once they
// close. The server keeps no session (stateless Streamable HTTP), so
// what an open session holds is its client's.
func BenchmarkMCPSessions(b *testing.B) {
	srv, key := mcpBenchServer(b)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	// measure opens 200 sessions at once, each calling get_me, then
	// closes them, and tells the heap and goroutines before, while open
	// and after.
	measure := func() (before, open, after uint64, goroutines int) {
		before, g0 := heap(), runtime.NumGoroutine()
		sessions := make([]*sdk.ClientSession, 200)
		var wg sync.WaitGroup
		for i := range sessions {
			wg.Go(func() {
				sessions[i] = mcpSession(b, srv.URL, key)
				if res, err := sessions[i].CallTool(b.Context(), &sdk.CallToolParams{Name: "get_me"}); err != nil || res.IsError {
					b.Errorf("get_me: %v %v", err, res)
				}
			})
		}
		wg.Wait()
		open, goroutines = heap(), runtime.NumGoroutine()-g0
		for _, cs := range sessions {
			cs.Close()
		}
		srv.CloseClientConnections()
		return before, open, heap(), goroutines
	}
	measure() // the first round's one-time allocations (pools, caches) are no session's
	for range b.N {
		before, open, after, openGoroutines := measure()
		b.ReportMetric(float64(int64(open)-int64(before))/200/1024, "KiB/open-session")
		b.ReportMetric(float64(openGoroutines)/200, "goroutines/open-session")
		b.ReportMetric(float64(int64(after)-int64(before))/(1<<20), "MiB-held-after-close")
	}
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func jsonDecode(resp *http.Response, out any) error { return json.NewDecoder(resp.Body).Decode(out) }
