package main

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sipregistry/sip/registry/judge"
)

func TestCheckBaseURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		addr, base string
		ok         bool
	}{
		{"127.0.0.1:8080", "", true},
		{"localhost:8080", "", true},
		{"[::1]:8080", "", true},
		{"0.0.0.0:8080", "", false},
		{"[::]:8080", "", false},
		{":8080", "", false},
		{"192.0.2.7:8080", "", false},
		{"0.0.0.0:8080", "https://sip.example.org", true},
		{"0.0.0.0:8080", "https://sip.example.org/registry/", true},
		{"0.0.0.0:8080", "sip.example.org", false},
		{"0.0.0.0:8080", "ftp://sip.example.org", false},
		{"0.0.0.0:8080", "https://sip.example.org/?a=b", false},
		{"0.0.0.0:8080", "https://user:pw@sip.example.org", false},
	} {
		t.Run(tt.addr+" "+tt.base, func(t *testing.T) {
			err := checkBaseURL(tt.addr, tt.base)
			if (err == nil) != tt.ok {
				t.Errorf("checkBaseURL(%q, %q) = %v, want ok %v", tt.addr, tt.base, err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "SIP_BASE_URL") {
				t.Errorf("checkBaseURL(%q, %q): %v does not name SIP_BASE_URL", tt.addr, tt.base, err)
			}
		})
	}
}

// TestServeFailsFastBeforeTheDatabase: a taken port, or an address beyond
// this machine without SIP_BASE_URL, is refused before the database is
// created, with an error that names the setting to change.
func TestServeFailsFastBeforeTheDatabase(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tt := range []struct {
		name string
		addr string
		want []string
	}{
		{"taken port", taken.Addr().String(), []string{"cannot listen on " + taken.Addr().String(), "--addr", "ADDR=", "another process uses it"}},
		{"all interfaces without SIP_BASE_URL", "0.0.0.0:0", []string{"SIP_BASE_URL is not set", "0.0.0.0:0 is not a loopback address"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "sip", "registry.db")
			code, _, errOut := runSip(t, "serve", "--addr", tt.addr, "--db", db)
			if code != exitConfig {
				t.Errorf("exit %d, want %d: %s", code, exitConfig, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if _, err := os.Stat(filepath.Dir(db)); !os.IsNotExist(err) {
				t.Errorf("the database's folder was created (%v): the server touched it before failing", err)
			}
		})
	}
}

// TestServeReportsTheJudge: the start-up log names the judge's URL (without
// credentials) and model, never its key; /readyz and /metrics say whether
// it answers.
func TestServeReportsTheJudge(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	m := MustRunMain(t, &Main{Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Judge: &judge.Client{URL: "https://user:pw@judge.example/v1?token=x", Model: "judge-model", APIKey: "sk-secret"}})
	var ready struct {
		Checks map[string]string `json:"checks"`
	}
	getJSON(t, m.URL+"/readyz", &ready)
	if ready.Checks["judge"] != "ok" {
		t.Errorf("readyz checks %v, want judge ok", ready.Checks)
	}
	resp, err := http.Get(m.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, w := range []string{"sip_judge_up 1", `sip_judge_outage_calls_total{kind="unreachable"} 0`, "sip_judge_bad_answers_total 0"} {
		if !strings.Contains(string(metrics), w) {
			t.Errorf("/metrics lacks %q", w)
		}
	}
	out := logs.String()
	if !strings.Contains(out, `"url":"https://judge.example/v1"`) || !strings.Contains(out, `"model":"judge-model"`) {
		t.Errorf("the log does not name the judge's URL and model:\n%s", out)
	}
	for _, secret := range []string{"sk-secret", "pw@", "token=x"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log shows %q", secret)
		}
	}

	none := MustRunMain(t, &Main{})
	getJSON(t, none.URL+"/readyz", &ready)
	if ready.Checks["judge"] != "not configured" {
		t.Errorf("without a judge: readyz checks %v", ready.Checks)
	}
}

// lockedBuffer is a log destination a test reads while the server writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
