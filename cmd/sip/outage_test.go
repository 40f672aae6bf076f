package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
)

// outage runs the server on PostgreSQL under load while stop() takes the
// database away and start() brings it back. Meanwhile requests must fail
// with 503 (never 500, never hang), /readyz must say so, and afterwards
// the same server must recover on its own.
func outage(t *testing.T, dbURL string, stop, start func()) {
	var logs syncBuffer
	m := MustRunMain(t, &Main{DatabaseURL: dbURL, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	client := &http.Client{Timeout: 15 * time.Second}
	checker := apitest.New(t, m.URL)
	var checked atomic.Int64 // a sample of the responses is held to the OpenAPI document
	var ok, unavailable atomic.Int64
	var mu sync.Mutex
	var bad []string
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodGet, m.URL+"/api/v1/evaluations", nil)
				resp, err := client.Do(req)
				if err != nil {
					mu.Lock()
					bad = append(bad, err.Error())
					mu.Unlock()
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if checked.Add(1)%50 == 0 || resp.StatusCode == 503 && unavailable.Load() < 20 {
					checker.Check(req, resp, body)
				}
				switch resp.StatusCode {
				case 200:
					ok.Add(1)
				case 503:
					var e struct {
						ErrorDetail struct{ Code string } `json:"error_detail"`
					}
					json.Unmarshal(body, &e)
					if e.ErrorDetail.Code != "unavailable" || resp.Header.Get("Retry-After") == "" {
						mu.Lock()
						bad = append(bad, "503 without the unavailable error: "+string(body))
						mu.Unlock()
					}
					unavailable.Add(1)
					time.Sleep(10 * time.Millisecond)
				default:
					mu.Lock()
					bad = append(bad, resp.Status+": "+string(body))
					mu.Unlock()
				}
			}
		})
	}
	waitFor := func(what string, status int, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for time.Now().Before(deadline) {
			if resp, err := client.Get(m.URL + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == status {
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("readyz did not report %s within %v", what, within)
	}
	time.Sleep(300 * time.Millisecond)
	stop()
	waitFor("the outage", 503, 15*time.Second)
	time.Sleep(time.Second)
	during := unavailable.Load()
	start()
	waitFor("recovery", 200, 30*time.Second)
	before := ok.Load()
	time.Sleep(500 * time.Millisecond)
	close(done)
	wg.Wait()
	if during == 0 || ok.Load() <= before {
		t.Errorf("no 503 during the outage (%d) or no success after it (%d→%d)", during, before, ok.Load())
	}
	if len(bad) > 0 {
		t.Errorf("%d requests failed otherwise than 503, e.g. %s\nerrors logged:\n%s", len(bad), bad[0], logs.String())
	}
	t.Logf("%d ok, %d unavailable", ok.Load(), unavailable.Load())
}

// TestDatabaseOutage takes PostgreSQL away with a TCP proxy that cuts every
// connection and refuses new ones, then brings it back.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	url := postgrestest.URL(t)
	p := postgrestest.NewProxy(t, url)
	outage(t, p.URL(url), p.Stop, p.Start)
}

// TestPostgresRestart stops and starts the real PostgreSQL cluster. It
// disturbs every other user of the server, so it runs only when
// SIP_TEST_PG_RESTART=1 (.ci/run runs it on its own after make test).
func TestPostgresRestart(t *testing.T) {
	if os.Getenv("SIP_TEST_PG_RESTART") != "1" {
		t.Skip("set SIP_TEST_PG_RESTART=1 to stop and start the real PostgreSQL cluster")
	}
	versions, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(versions) == 0 {
		t.Fatalf("no PostgreSQL cluster to restart: %v", err)
	}
	ctl := func(action string) {
		out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", versions[0].Name(), "main", action).CombinedOutput()
		if err != nil && !strings.Contains(string(out), "already") {
			t.Fatalf("pg_ctlcluster %s: %v\n%s", action, err, out)
		}
	}
	outage(t, postgrestest.URL(t), func() { ctl("stop") }, func() { ctl("start") })
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
