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
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
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

// BenchmarkPoAWFlow drives the full Proof of Agentic Work flow with 50
// concurrent agents against each store, in its two shapes: three
// requests (register, start, whose answer holds the challenge, submit)
// and two (start with {"register": true}, submit). Beside it run two
// references on the same store: the floor, the same store calls made
// directly without HTTP, and bare HTTP, a plain net/http server whose
// handlers make those store calls and nothing else (no routing, checks,
// execution record or logs): what HTTP itself costs on this machine. The
// sides run alternately in ten short rounds (the order turned every
// round), so all meet the same machine and the same amount of stored
// data; a flow counts when it ends within its round. It reports the HTTP
// flow's flows per second and p99 per request, the floor's flows per
// second, the ratios x-floor and x-bare-http, and this process's CPU per
// flow on each side.
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
			agentsOf := func(side string) []*registry.Agent {
				as := make([]*registry.Agent, agents)
				for i := range as {
					a, _, err := registry.NewAgent(fmt.Sprintf("%s-%s-%d-%d", side, name, i, time.Now().UnixNano()%1e6), "", time.Now())
					if err != nil {
						b.Fatal(err)
					}
					if err := s.(registry.AgentStore).CreateAgent(b.Context(), a); err != nil {
						b.Fatal(err)
					}
					as[i] = a
				}
				return as
			}
			floorAgents := agentsOf("floor")
			bare := httptest.NewServer(bareFlowServer(b, s))
			defer bare.Close()
			dial := func(addr string, as []*registry.Agent) []*agentConn {
				conns := make([]*agentConn, len(as))
				for i, a := range as {
					if conns[i], err = dialAgent(addr, a.ID); err != nil { // the bare server takes the agent's id as its key
						b.Fatal(err)
					}
					b.Cleanup(func() { conns[i].Close() })
				}
				return conns
			}
			keys := make([]string, agents)
			for i := range keys {
				a, creds, err := registry.NewAgent(fmt.Sprintf("bench-%s-%d-%d", name, i, time.Now().UnixNano()%1e6), "", time.Now())
				if err != nil {
					b.Fatal(err)
				}
				if err := s.(registry.AgentStore).CreateAgent(b.Context(), a); err != nil {
					b.Fatal(err)
				}
				keys[i] = creds.APIKey
			}
			conns := make([]*agentConn, agents)
			for i, key := range keys {
				if conns[i], err = dialAgent(srv.Listener.Addr().String(), key); err != nil {
					b.Fatal(err)
				}
				defer conns[i].Close()
			}
			bareConns := dial(bare.Listener.Addr().String(), agentsOf("bare"))
			defer collectAsServed()()
			var seq atomic.Int64 // registration ids of the floor
			// Warm every side up (connections, caches, the pool) unmeasured.
			runFlows(b, conns, false, d/5)
			runFlows(b, bareConns, false, d/5)
			served := servedResult(b, conns[0], s.(registrytest.FullStore))
			floorFlows(b, s, floorAgents, served, false, &seq, d/5)
			for _, flow := range []struct {
				name     string
				register bool
			}{{"three-requests", false}, {"two-requests", true}} {
				b.Run(flow.name, func(b *testing.B) {
					for b.Loop() {
						var flows, floor, bared int64
						var cpu, floorCPU time.Duration
						var lat []time.Duration
						sides := []func(){
							func() {
								t := processCPU()
								n, l := runFlows(b, conns, flow.register, d)
								cpu += processCPU() - t
								flows += n
								lat = append(lat, l...)
							},
							func() {
								t := processCPU()
								floor += floorFlows(b, s, floorAgents, served, flow.register, &seq, d)
								floorCPU += processCPU() - t
							},
							func() {
								n, _ := runFlows(b, bareConns, flow.register, d)
								bared += n
							},
						}
						for r := range rounds {
							for i := range sides {
								sides[(r+i)%len(sides)]()
							}
						}
						if len(lat) == 0 || floor == 0 || bared == 0 {
							b.Fatal("no flows")
						}
						slices.Sort(lat)
						secs := (rounds * d).Seconds()
						b.ReportMetric(float64(flows)/secs, "flows/s")
						b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
						b.ReportMetric(float64(floor)/secs, "floor-flows/s")
						b.ReportMetric(float64(flows)/float64(floor), "x-floor")
						b.ReportMetric(float64(flows)/float64(bared), "x-bare-http")
						if cpu > 0 && flows > 0 {
							// This process's CPU per flow (server and client, or
							// the floor's store calls; not the database server's).
							b.ReportMetric(float64(cpu.Microseconds())/float64(flows), "cpu-us/flow")
							b.ReportMetric(float64(floorCPU.Microseconds())/float64(floor), "floor-cpu-us/flow")
						}
					}
				})
			}
		})
	}
}

// bareFlowServer is the flow's HTTP reference: plain net/http handlers
// that make the floor's store calls and answer what the agents' client
// reads, with nothing else (the bearer token is the agent's id). Its
// distance from the floor is what HTTP itself costs on this machine.
func bareFlowServer(b *testing.B, s registry.Store) http.Handler {
	es := s.(registrytest.FullStore)
	poaw, err := s.Entry(b.Context(), "poaw")
	if err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	agent := func(r *http.Request) string { return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") }
	register := func(r *http.Request, agentID string) (*evaluation.Registration, error) {
		s.SyncState(r.Context())
		reg, _, err := es.Register(r.Context(), &evaluation.Registration{ID: fmt.Sprintf("reg_bare_%d", seq.Add(1)), AgentID: agentID,
			EvaluationID: "poaw", VersionID: poaw.Current.ID, RegisteredAt: time.Now()})
		return reg, err
	}
	answer := func(w http.ResponseWriter, body []byte, err error) {
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header()["Content-Type"] = []string{"application/json"}
		w.WriteHeader(http.StatusCreated)
		w.Write(body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/evaluations/poaw/register", func(w http.ResponseWriter, r *http.Request) {
		reg, err := register(r, agent(r))
		if err != nil {
			answer(w, nil, err)
			return
		}
		answer(w, []byte(`{"success":true,"registration":{"id":"`+reg.ID+`"}}`), nil)
	})
	mux.HandleFunc("POST /api/v1/evaluations/poaw/start", func(w http.ResponseWriter, r *http.Request) {
		a := agent(r)
		if body, _ := io.ReadAll(r.Body); bytes.Contains(body, []byte(`"register":true`)) {
			_, err := es.OpenRegistration(r.Context(), a, "poaw")
			if errors.Is(err, registry.ErrNotFound) {
				_, err = register(r, a)
			}
			if err != nil {
				answer(w, nil, err)
				return
			}
		}
		s.SyncState(r.Context())
		fresh, err := evaluation.NewChallenge("", a, time.Now(), 15*time.Second)
		if err != nil {
			answer(w, nil, err)
			return
		}
		ch, _, err := es.StartChallenge(r.Context(), "poaw", fresh)
		if err != nil {
			answer(w, nil, err)
			return
		}
		out := append(make([]byte, 0, 512), `{"success":true,"challenge":{"id":"`+ch.ID+`","values":[`...)
		for i, v := range ch.Values {
			if i > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendInt(out, int64(v), 10)
		}
		answer(w, append(out, `],"nonce":"`+ch.Nonce+`"}}`...), nil)
	})
	mux.HandleFunc("POST /api/v1/evaluations/poaw/submit", func(w http.ResponseWriter, r *http.Request) {
		a := agent(r)
		var sub evaluation.PoAWSubmission
		if err := json.NewDecoder(r.Body).Decode(&sub); err != nil {
			answer(w, nil, err)
			return
		}
		s.SyncState(r.Context())
		reg, _, err := es.OpenRegistrationChallenge(r.Context(), a, "poaw", sub.ChallengeID)
		if err != nil {
			answer(w, nil, err)
			return
		}
		now := time.Now()
		_, err = es.AnswerChallenge(r.Context(), sub.ChallengeID, &evaluation.Result{ID: "res_" + reg.ID, RegistrationID: reg.ID, AgentID: a,
			EvaluationID: "poaw", VersionID: reg.VersionID, Version: reg.Version, ContentSHA256: "x", Passed: true, CompletedAt: now,
			Trace: evaluation.NewTrace("poaw_handler", now, now, true, false, "", nil)}, 10)
		answer(w, []byte(`{"success":true,"result":{"passed":true}}`), err)
	})
	return mux
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

// agentConn is one agent's keep-alive connection to the server, a load
// generator's client: a real agent runs on another machine, so whatever
// this process spends on the client side is taken from the server's two
// cores. Each request is written in one write from bytes made once, and
// the response read with a minimal HTTP/1.1 reader on the agent's own
// goroutine (no http.Transport and its two goroutines per connection):
// the status line, Content-Length and the body. A response it cannot read
// that way (chunked, or closing the connection) is an error, not a guess.
type agentConn struct {
	net.Conn
	head string // "Host: …\r\nAuthorization: Bearer …\r\n"
	br   *bufio.Reader
	req  []byte
	body []byte // the last response's body
}

func dialAgent(addr, key string) (*agentConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &agentConn{Conn: c, head: "Host: " + addr + "\r\nAuthorization: Bearer " + key + "\r\n", br: bufio.NewReaderSize(c, 16<<10)}, nil
}

// do sends one request with the agent's key and returns the response's
// status; its body is in c.body until the next request.
func (c *agentConn) do(method, path, body string) (int, error) {
	c.req = append(c.req[:0], method...)
	c.req = append(c.req, ' ')
	c.req = append(c.req, path...)
	c.req = append(c.req, " HTTP/1.1\r\n"...)
	c.req = append(c.req, c.head...)
	if body != "" {
		c.req = append(c.req, "Content-Type: application/json\r\n"...)
	}
	c.req = append(c.req, "Content-Length: "...)
	c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
	c.req = append(c.req, "\r\n\r\n"...)
	c.req = append(c.req, body...)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(c.req); err != nil {
		return 0, err
	}
	return c.readResponse()
}

func (c *agentConn) readResponse() (int, error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	// "HTTP/1.1 201 Created\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	length := -1
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, fmt.Errorf("bad header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, fmt.Errorf("Transfer-Encoding %q: the load generator reads Content-Length bodies only", value)
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			return 0, errors.New("the server closed the connection")
		}
	}
	if length < 0 {
		return 0, errors.New("a response without Content-Length")
	}
	c.body = slices.Grow(c.body[:0], length)[:length]
	if _, err := io.ReadFull(c.br, c.body); err != nil {
		return 0, err
	}
	return status, nil
}

// runFlows runs the flow over HTTP, one agent per connection, for d, and
// returns the flows completed and every request's latency; with register,
// start registers (two requests) instead of a request of its own.
func runFlows(b *testing.B, conns []*agentConn, register bool, d time.Duration) (int64, []time.Duration) {
	var mu sync.Mutex
	var lat []time.Duration
	var flows atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for _, conn := range conns {
		wg.Go(func() {
			mine := make([]time.Duration, 0, 1024)
			call := func(method, path, body string) bool {
				start := time.Now()
				status, err := conn.do(method, path, body)
				if err != nil {
					b.Error(err)
					return false
				}
				mine = append(mine, time.Since(start))
				if status >= 300 {
					b.Errorf("%s %s: %d %s", method, path, status, conn.body)
					return false
				}
				return true
			}
			var values []int
			for time.Now().Before(deadline) {
				if register {
					if !call("POST", "/api/v1/evaluations/poaw/start", `{"register":true}`) {
						return
					}
				} else if !call("POST", "/api/v1/evaluations/poaw/register", "") || !call("POST", "/api/v1/evaluations/poaw/start", "") {
					return
				}
				var id, nonce string
				var ok bool
				if id, values, nonce, ok = startedChallenge(conn.body, values[:0]); !ok {
					b.Errorf("start: no challenge in %s", conn.body)
					return
				}
				if !call("POST", "/api/v1/evaluations/poaw/submit", `{"challenge_id":"`+id+`","hash":"`+evaluation.PoAWHash(values, nonce)+`"}`) {
					return
				}
				if !bytes.Contains(conn.body, []byte(`"passed":true`)) {
					b.Errorf("submit: not passed: %s", conn.body)
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

// servedResult runs one flow over conn and returns the result the service
// stored for it. The floor stores results like it (the same execution
// record and details), so both sides write the same bytes: a thinner
// record would make the floor's statements cheaper than the flow's.
func servedResult(b *testing.B, conn *agentConn, es registrytest.FullStore) *evaluation.Result {
	post := func(path, body string) {
		if status, err := conn.do("POST", path, body); err != nil || status >= 300 {
			b.Fatalf("POST %s: %d %v %s", path, status, err, conn.body)
		}
	}
	post("/api/v1/evaluations/poaw/register", "")
	post("/api/v1/evaluations/poaw/start", "")
	var st struct {
		Challenge struct {
			ID     string
			Values []int
			Nonce  string
		} `json:"challenge"`
	}
	if err := json.Unmarshal(conn.body, &st); err != nil {
		b.Fatal(err)
	}
	// The flows' reader must read what a decoder does.
	id, values, nonce, ok := startedChallenge(conn.body, nil)
	if !ok || id != st.Challenge.ID || nonce != st.Challenge.Nonce || !slices.Equal(values, st.Challenge.Values) {
		b.Fatalf("startedChallenge(%s) = %q %v %q %v", conn.body, id, values, nonce, ok)
	}
	post("/api/v1/evaluations/poaw/submit", fmt.Sprintf(`{"challenge_id":%q,"hash":%q}`, id, evaluation.PoAWHash(values, nonce)))
	var sub struct {
		Result struct{ ID string } `json:"result"`
	}
	if err := json.Unmarshal(conn.body, &sub); err != nil {
		b.Fatal(err)
	}
	r, err := es.Result(b.Context(), sub.Result.ID)
	if err != nil || !r.Passed {
		b.Fatalf("the served result %s: %v %+v", sub.Result.ID, err, r)
	}
	return r
}

// startedChallenge reads the challenge's id, values and nonce out of
// start's answer by their keys, as a load generator would: decoding the
// whole answer would cost this process (the server's cores) what an
// agent pays on its own machine. A wrong read cannot pass unseen: the
// submission would then fail.
func startedChallenge(body []byte, values []int) (id string, _ []int, nonce string, ok bool) {
	_, body, ok = bytes.Cut(body, []byte(`"challenge":{`))
	if !ok {
		return "", values, "", false
	}
	str := func(key string) (string, bool) {
		_, rest, ok := bytes.Cut(body, []byte(key))
		v, _, closed := bytes.Cut(rest, []byte(`"`))
		return string(v), ok && closed && len(v) > 0
	}
	id, okID := str(`"id":"`)
	nonce, okNonce := str(`"nonce":"`)
	_, list, okValues := bytes.Cut(body, []byte(`"values":[`))
	list, _, closed := bytes.Cut(list, []byte("]"))
	if !okID || !okNonce || !okValues || !closed {
		return "", values, "", false
	}
	for len(list) > 0 {
		var item []byte
		item, list, _ = bytes.Cut(list, []byte(","))
		v, err := strconv.Atoi(string(item))
		if err != nil {
			return "", values, "", false
		}
		values = append(values, v)
	}
	return id, values, nonce, len(values) == evaluation.PoAWValues
}

// floorFlows makes the store calls of the flow directly, one agent of
// agents each, for d, and returns the flows completed. Each result is
// served's, under the floor's ids and times. With startRegisters it makes
// the calls of a start that registers: first the look for an open
// registration.
func floorFlows(b *testing.B, s registry.Store, agents []*registry.Agent, served *evaluation.Result, startRegisters bool, seq *atomic.Int64, d time.Duration) int64 {
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
				if startRegisters {
					if _, err := es.OpenRegistration(ctx, a.ID, "poaw"); !errors.Is(err, registry.ErrNotFound) {
						b.Errorf("an open registration before the flow: %v", err)
						return
					}
				}
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
				// submit
				s.SyncState(ctx)
				es.OpenRegistrationChallenge(ctx, a.ID, "poaw", ch.ID)
				r := *served
				r.ID, r.RegistrationID, r.AgentID, r.VersionID, r.Version, r.CompletedAt = "res_"+reg.ID, reg.ID, a.ID, reg.VersionID, reg.Version, now
				if _, err := es.AnswerChallenge(ctx, ch.ID, &r, 10); err != nil {
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
