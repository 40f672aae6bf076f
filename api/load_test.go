package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/registrytest"
	"github.com/sipregistry/sip/registry/siptest"
)

// load hits url from workers goroutines for d and returns the request
// rate and the 50th and 99th percentile latencies.
func load(b *testing.B, url string, workers int, d time.Duration) (rps float64, p50, p99 time.Duration) {
	tr := &http.Transport{MaxIdleConns: workers, MaxIdleConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for range workers {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 4096)
			for time.Now().Before(deadline) {
				start := time.Now()
				resp, err := client.Get(url)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
				lat = append(lat, time.Since(start))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(all)
	if len(all) == 0 {
		b.Fatal("no requests completed")
	}
	return float64(len(all)) / d.Seconds(), all[len(all)/2], all[len(all)*99/100]
}

// listHandler serves GET /api/v1/evaluations: the API on the named store
// after syncing files, logging to logs, or for "floor" a bare echo
// handler returning *body (which must be set before the floor runs).
func listHandler(b *testing.B, name string, files []registry.File, body *[]byte, logs slog.Handler) http.Handler {
	if name == "floor" {
		e := echo.New()
		e.GET("/api/v1/evaluations", func(c echo.Context) error { return c.JSONBlob(http.StatusOK, *body) })
		return e
	}
	s := backends[name](b)
	if _, err := registry.Sync(b.Context(), s, registry.Source{Files: files, Commit: "c1", Name: "bench"}, time.Now()); err != nil {
		b.Fatal(err)
	}
	return api.NewServer(api.Config{Catalog: registry.NewCatalog(s), Logger: slog.New(logs)})
}

// reportLoad runs load once per benchmark iteration and reports its
// throughput (in unit) and its p50 and p99 latencies.
func reportLoad(b *testing.B, url string, workers int, d time.Duration, unit string) {
	for b.Loop() {
		rps, p50, p99 := load(b, url, workers, d)
		b.ReportMetric(rps, unit)
		b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkListEvaluations serves GET /api/v1/evaluations with 50 SIPs
// from each store under load, and the floor: a bare echo handler that
// returns the same body, precomputed.
func BenchmarkListEvaluations(b *testing.B) {
	const workers, d = 16, 3 * time.Second
	files := siptest.Generate(50, 5)
	var body []byte
	for _, name := range []string{"sqlite", "floor", "postgres"} {
		b.Run(name, func(b *testing.B) {
			h := listHandler(b, name, files, &body, slog.DiscardHandler)
			srv := httptest.NewServer(h)
			defer srv.Close()
			url := srv.URL + "/api/v1/evaluations"
			if body == nil && name != "floor" {
				resp, err := http.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				body, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			reportLoad(b, url, workers, d, "req/s")
		})
	}
}

// BenchmarkPoAWFlow drives the full Proof of Agentic Work flow (register,
// start, fetch the challenge, submit) with 50 concurrent agents against
// each store, and the floor: the same store calls made directly, without
// HTTP. The two run alternately on one store, in ten short rounds (the order
// reversed every other round), so both meet the same machine and the same
// amount of stored data; a flow counts when it ends within its round. It
// reports the HTTP flow's flows per second and p99 per request, the
// floor's flows per second, their ratio (x-floor), and this process's CPU
// per flow on each side.
func BenchmarkPoAWFlow(b *testing.B) {
	const agents, rounds, d = 50, 10, 300 * time.Millisecond
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			s := backends[name](b)
			files, err := registry.ReadFS(evaluations.FS, ".", "evaluations")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := registry.Sync(b.Context(), s, registry.Source{Files: files, Commit: "c1", Name: "bench"}, time.Now()); err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(s), Logger: slog.New(slog.DiscardHandler)}, runtimeStores{Agents: s.(registry.AgentStore), Evaluations: s.(registrytest.FullStore), Jobs: s.(jobStore)})))
			defer srv.Close()
			keys := make([]string, agents)
			floorAgents := make([]*registry.Agent, agents)
			for i := range keys {
				a, creds, err := registry.NewAgent(fmt.Sprintf("bench-%s-%d-%d", name, i, time.Now().UnixNano()%1e6), "", time.Now())
				if err != nil {
					b.Fatal(err)
				}
				if err := s.(registry.AgentStore).CreateAgent(b.Context(), a); err != nil {
					b.Fatal(err)
				}
				keys[i] = creds.APIKey
				if floorAgents[i], _, err = registry.NewAgent(fmt.Sprintf("floor-%s-%d-%d", name, i, time.Now().UnixNano()%1e6), "", time.Now()); err != nil {
					b.Fatal(err)
				}
				if err := s.(registry.AgentStore).CreateAgent(b.Context(), floorAgents[i]); err != nil {
					b.Fatal(err)
				}
			}
			conns := make([]*agentConn, agents)
			for i, key := range keys {
				if conns[i], err = dialAgent(srv.Listener.Addr().String(), key); err != nil {
					b.Fatal(err)
				}
				defer conns[i].Close()
			}
			defer collectAsServed()()
			var seq atomic.Int64 // registration ids of the floor
			// Warm both sides up (connections, caches, the pool) unmeasured.
			runFlows(b, conns, d/5)
			floorFlows(b, s, floorAgents, &seq, d/5)
			for b.Loop() {
				var flows, floor int64
				var cpu, floorCPU time.Duration
				var lat []time.Duration
				for r := range rounds {
					overHTTP := func() {
						t := processCPU()
						n, l := runFlows(b, conns, d)
						cpu += processCPU() - t
						flows += n
						lat = append(lat, l...)
					}
					direct := func() {
						t := processCPU()
						floor += floorFlows(b, s, floorAgents, &seq, d)
						floorCPU += processCPU() - t
					}
					if r%2 == 0 {
						overHTTP()
						direct()
					} else {
						direct()
						overHTTP()
					}
				}
				if len(lat) == 0 || floor == 0 {
					b.Fatal("no flows")
				}
				slices.Sort(lat)
				secs := (rounds * d).Seconds()
				b.ReportMetric(float64(flows)/secs, "flows/s")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(floor)/secs, "floor-flows/s")
				b.ReportMetric(float64(flows)/float64(floor), "x-floor")
				if cpu > 0 && flows > 0 {
					// This process's CPU per flow (server and client, or
					// the floor's store calls; not the database server's).
					b.ReportMetric(float64(cpu.Microseconds())/float64(flows), "cpu-us/flow")
					b.ReportMetric(float64(floorCPU.Microseconds())/float64(floor), "floor-cpu-us/flow")
				}
			}
		})
	}
}

// collectAsServed sets the collector's GOGC as sip serve sets it from the
// live heap (cmd/sip/gctune.go: a collection waits for 128 MiB of garbage,
// GOGC between 100 and 800), unless GOGC or GOMEMLIMIT is set, and returns
// the function that puts the previous setting back. A test binary's live
// heap is a few megabytes: with the default, both sides would pay for
// collections a server does not make.
func collectAsServed() func() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	live := max(sample[0].Value.Uint64(), 1)
	old := debug.SetGCPercent(int(min(800, max(100, (128<<20)*100/live))))
	return func() { debug.SetGCPercent(old) }
}

// agentConn is one agent's keep-alive connection to the server. Requests
// are written with net/http's own HTTP/1.1 encoding and responses read
// with its parser, on the agent's goroutine: a real agent runs on another
// machine, and http.Transport's two goroutines per connection (and their
// hand-offs) would take the CPU the server shares with this process.
type agentConn struct {
	net.Conn
	host, key string
	br        *bufio.Reader
	bw        *bufio.Writer
	body      bytes.Buffer // the last response's body
}

func dialAgent(addr, key string) (*agentConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &agentConn{Conn: c, host: addr, key: key, br: bufio.NewReader(c), bw: bufio.NewWriter(c)}, nil
}

// do sends one request with the agent's key and decodes the response body
// into out (when not nil); it returns the status.
func (c *agentConn) do(method, path, body string, out any) (int, error) {
	req := &http.Request{Method: method, URL: &url.URL{Path: path}, Host: c.host, ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Authorization": {"Bearer " + c.key}, "Content-Type": {"application/json"}}}
	if body != "" {
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := req.Write(c.bw); err != nil {
		return 0, err
	}
	if err := c.bw.Flush(); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(c.br, req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	c.body.Reset()
	if _, err := c.body.ReadFrom(resp.Body); err != nil { // to the end, so the next response starts where it should
		return 0, err
	}
	if out != nil {
		if err := json.Unmarshal(c.body.Bytes(), out); err != nil {
			return 0, err
		}
	}
	if resp.Close {
		return resp.StatusCode, errors.New("the server closed the connection")
	}
	return resp.StatusCode, nil
}

// runFlows runs the flow over HTTP, one agent per connection, for d, and
// returns the flows completed and every request's latency.
func runFlows(b *testing.B, conns []*agentConn, d time.Duration) (int64, []time.Duration) {
	var mu sync.Mutex
	var lat []time.Duration
	var flows atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for _, conn := range conns {
		wg.Go(func() {
			mine := make([]time.Duration, 0, 1024)
			call := func(method, path, body string, out any) bool {
				start := time.Now()
				status, err := conn.do(method, path, body, out)
				if err != nil {
					b.Error(err)
					return false
				}
				mine = append(mine, time.Since(start))
				if status >= 300 {
					b.Errorf("%s %s: %d", method, path, status)
					return false
				}
				return true
			}
			for time.Now().Before(deadline) {
				var st struct {
					Challenge struct{ ID, FetchURL string } `json:"challenge"`
				}
				var ch struct {
					Challenge struct {
						Values []int
						Nonce  string
					} `json:"challenge"`
				}
				if !call("POST", "/api/v1/evaluations/poaw/register", "", nil) ||
					!call("POST", "/api/v1/evaluations/poaw/start", "", &st) ||
					!call("GET", "/api/v1/evaluations/poaw/challenge/"+st.Challenge.ID, "", &ch) ||
					!call("POST", "/api/v1/evaluations/poaw/submit", fmt.Sprintf(`{"challenge_id":%q,"hash":%q}`, st.Challenge.ID,
						evaluation.PoAWHash(ch.Challenge.Values, ch.Challenge.Nonce)), nil) {
					return
				}
				if !time.Now().After(deadline) { // a flow finished late ran partly outside the round
					flows.Add(1)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return flows.Load(), lat
}

// floorFlows makes the store calls of the flow directly, one agent of
// agents each, for d, and returns the flows completed.
func floorFlows(b *testing.B, s registry.Store, agents []*registry.Agent, seq *atomic.Int64, d time.Duration) int64 {
	ctx := b.Context()
	es := s.(registrytest.FullStore)
	poaw, err := s.Entry(ctx, "poaw")
	if err != nil {
		b.Fatal(err)
	}
	var flows atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				now, n := time.Now(), seq.Add(1)
				// register (the server knows the key after the first
				// request: it authenticates without a statement)
				s.SyncState(ctx)
				reg, _, err := es.Register(ctx, &evaluation.Registration{ID: fmt.Sprintf("reg_%s_%d", a.ID, n), AgentID: a.ID, EvaluationID: "poaw",
					VersionID: poaw.Current.ID, RegisteredAt: now})
				if err != nil {
					b.Error(err)
					return
				}
				// start
				s.SyncState(ctx)
				fresh, _ := evaluation.NewChallenge("", a.ID, now, 15*time.Second)
				ch, _, _ := es.StartChallenge(ctx, "poaw", fresh)
				// fetch
				es.Challenge(ctx, ch.ID)
				// submit
				s.SyncState(ctx)
				es.OpenRegistrationChallenge(ctx, a.ID, "poaw", ch.ID)
				if _, err := es.AnswerChallenge(ctx, ch.ID, &evaluation.Result{ID: "res_" + reg.ID, RegistrationID: reg.ID, AgentID: a.ID, EvaluationID: "poaw",
					VersionID: reg.VersionID, Version: reg.Version, ContentSHA256: "x", Passed: true, CompletedAt: now,
					Trace: evaluation.NewTrace("poaw_handler", now, now, true, false, "", nil)}, 10); err != nil {
					b.Error(err)
					return
				}
				if !time.Now().After(deadline) {
					flows.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return flows.Load()
}
