package main

import (
	"context"
	"log/slog"
	"net/http"
	neturl "net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry/seal"
	"github.com/sipregistry/sip/registry/siptest"
)

// MustRunMain starts the whole server on a free port with a fresh SQLite
// file and stops it when the test ends.
func MustRunMain(t *testing.T, m *Main) *Main {
	t.Helper()
	if m.Addr == "" {
		m.Addr = "127.0.0.1:0"
	}
	if m.DatabaseURL == "" {
		m.DatabaseURL = filepath.Join(t.TempDir(), "registry.db")
	}
	if m.Logger == nil {
		m.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	select {
	case <-m.Ready():
	case err := <-done:
		cancel()
		t.Fatalf("Run: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not start")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return m
}

// getJSON GETs url, holds the response to the OpenAPI document, decodes
// it into out (when not nil) and returns the status.
func getJSON(t *testing.T, url string, out any) int {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	return apitest.New(t, u.Scheme+"://"+u.Host).Get(u.RequestURI(), out).StatusCode
}

type evalList struct {
	Evaluations []struct {
		ID string `json:"id"`
	} `json:"evaluations"`
}

func TestServeBundledSIPs(t *testing.T) {
	t.Parallel()
	m := MustRunMain(t, &Main{})
	var got evalList
	if code := getJSON(t, m.URL+"/api/v1/evaluations", &got); code != 200 || len(got.Evaluations) != 7 {
		t.Fatalf("%d %+v", code, got)
	}
	if code := getJSON(t, m.URL+"/readyz", nil); code != 200 {
		t.Errorf("readyz %d", code)
	}
}

// TestServeGradesTheSealedBenchmark: `make run` on a fresh machine (no
// SIP_SEALING_KEY_FILE, no App) opens the bundled benchmark's sealed
// answers with the development key, and says the key is a development
// one; a registry that governs a repository never falls back to it.
func TestServeGradesTheSealedBenchmark(t *testing.T) {
	t.Parallel()
	m := MustRunMain(t, &Main{DevClaims: true})
	var pub struct {
		Recipient   string `json:"recipient"`
		Development bool   `json:"development"`
	}
	dev, err := seal.ParseKey(evaluations.DevelopmentSealingKey)
	if err != nil {
		t.Fatal(err)
	}
	if code := getJSON(t, m.URL+"/api/v1/sealing-key", &pub); code != 200 || !pub.Development || pub.Recipient != dev.Recipient() {
		t.Errorf("sealing key: %d %+v", code, pub)
	}
	// The benchmark awards points for fixed answers: claimed agents only.
	taker := newWalker(t, m.URL, "sealed-taker", "sealer")
	taker.poaw()
	c := apitest.New(t, m.URL)
	auth := http.Header{"Authorization": {"Bearer " + taker.key}, "Content-Type": {"application/json"}}
	c.Do("POST", "/api/v1/evaluations/ai-safety-benchmark/register", strings.NewReader(""), auth, nil)
	var st struct {
		Questions []struct {
			ID string `json:"id"`
		} `json:"questions"`
	}
	if resp := c.Do("POST", "/api/v1/evaluations/ai-safety-benchmark/start", strings.NewReader(""), auth, &st); resp.StatusCode != 200 || len(st.Questions) != 10 {
		t.Errorf("start of the sealed benchmark: %d, %d questions", resp.StatusCode, len(st.Questions))
	}

	for _, tt := range []struct {
		name  string
		m     *Main
		want  *seal.Key
		isDev bool
	}{
		{"key file", &Main{SealingKey: dev}, dev, false},
		{"no key, no App", &Main{}, dev, true},
		{"no key, the App", &Main{GitHub: &bot.Config{}}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, isDev, err := tt.m.sealingKey(slog.New(slog.DiscardHandler))
			if err != nil || (got == nil) != (tt.want == nil) || got != nil && got.Recipient() != tt.want.Recipient() || isDev != tt.isDev {
				t.Errorf("got %v dev=%v %v; want %v dev=%v", got, isDev, err, tt.want, tt.isDev)
			}
		})
	}
}

func TestServeThenSyncRepo(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "registry.db")
	m := MustRunMain(t, &Main{DatabaseURL: db})
	repo := siptest.NewRepo(t, map[string]string{
		"evaluations/SIP-2.md": string(siptest.SIP(2, "poaw", "active").Content),
		"evaluations/SIP-9.md": string(siptest.SIP(9, "nine", "active", "poaw").Content),
	})
	sha := siptest.Git(t, repo, "rev-parse", "HEAD")
	// This repository's SIP-2 differs from the bundled one without a new
	// version, so the registry refuses it and stays as it was...
	code, out, errOut := runSip(t, "sync", "--db", db, "--repo", repo, "--ref", sha)
	if code != exitData || !strings.Contains(out, "[version-not-bumped]") || !strings.Contains(errOut, "not applied") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if code := getJSON(t, m.URL+"/api/v1/evaluations/nine", nil); code != 404 {
		t.Errorf("a refused sync was applied: %d", code)
	}
	// ...so sync a repository that continues the bundled SIPs instead.
	repo = siptest.NewRepo(t, map[string]string{"evaluations/SIP-9.md": string(siptest.SIP(9, "nine", "active").Content)})
	for _, name := range []string{"SIP-1.md", "SIP-2.md", "SIP-3.md", "SIP-4.md", "SIP-5.md", "SIP-6.md", "SIP-7.md", "SIP-8.md"} {
		b := mustRead(t, filepath.Join(bundled, name))
		siptest.WriteFiles(t, repo, map[string]string{"evaluations/" + name: b})
	}
	sha = siptest.Commit(t, repo, "continue the bundled SIPs", nil)
	if code, out, errOut := runSip(t, "sync", "--db", db, "--repo", repo, "--ref", sha); code != exitOK {
		t.Fatalf("sync: exit %d\n%s%s", code, out, errOut)
	}
	var versions struct {
		Versions []struct {
			CommitSHA string `json:"commit_sha"`
		} `json:"versions"`
	}
	if code := getJSON(t, m.URL+"/api/v1/evaluations/nine/versions", &versions); code != 200 || len(versions.Versions) != 1 || versions.Versions[0].CommitSHA != sha {
		t.Errorf("%d %+v, want commit %s", code, versions, sha)
	}
	// A restart does not put the bundled SIPs back over the repository's.
	m2 := MustRunMain(t, &Main{DatabaseURL: db})
	if code := getJSON(t, m2.URL+"/api/v1/evaluations/nine", nil); code != 200 {
		t.Errorf("after restart: %d", code)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServeRefusesInvalidEvaluations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	siptest.WriteFiles(t, dir, map[string]string{"SIP-1.md": "---\nsip: [\n---\n"})
	code, _, errOut := runSip(t, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "r.db"), "--evaluations", dir)
	if code != exitData || !strings.Contains(errOut, "invalid") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestServeBadConfig(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"serve", "--addr", "127.0.0.1:0", "--db", "mysql://x"}, exitConfig},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--db", "postgres://postgres@127.0.0.1:1/x?connect_timeout=1"}, exitUnavailable},
		{[]string{"serve", "--addr", "256.0.0.1:99999", "--db", filepath.Join(t.TempDir(), "r.db")}, exitConfig},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--evaluations", "/no/such/dir", "--db", filepath.Join(t.TempDir(), "r2.db")}, exitNoInput},
		{[]string{"serve", "extra"}, exitUsage},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if code, _, errOut := runSip(t, tt.args...); code != tt.code {
				t.Errorf("got exit %d, want %d: %s", code, tt.code, errOut)
			}
		})
	}
}

// TestServeBadPoolSettings: a pool setting that does not parse is a
// configuration error that names the setting and never shows the
// password.
func TestServeBadPoolSettings(t *testing.T) {
	t.Parallel()
	for _, setting := range []string{"pool_min_conns=many", "pool_max_conns=-"} {
		code, _, errOut := runSip(t, "serve", "--addr", "127.0.0.1:0", "--db", "postgres://postgres:s3cret@127.0.0.1:1/x?"+setting)
		name, _, _ := strings.Cut(setting, "=")
		if code != exitConfig || !strings.Contains(errOut, "cannot parse "+name) || strings.Contains(errOut, "s3cret") {
			t.Errorf("%s: exit %d, stderr %q; want %d naming %s without the password", setting, code, errOut, exitConfig, name)
		}
	}
}

func TestServeAgents(t *testing.T) {
	t.Parallel()
	m := MustRunMain(t, &Main{BaseURL: "https://sip.example"})
	c := apitest.New(t, m.URL)
	var r struct {
		Agent struct {
			APIKey   string `json:"api_key"`
			ClaimURL string `json:"claim_url"`
		} `json:"agent"`
	}
	if resp := c.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"e2e-agent"}`),
		map[string][]string{"Content-Type": {"application/json"}}, &r); resp.StatusCode != 201 || !strings.HasPrefix(r.Agent.ClaimURL, "https://sip.example/claim/") {
		t.Fatalf("register: %d %+v", resp.StatusCode, r)
	}
	if resp := c.Do("GET", "/api/v1/agents/me", nil, map[string][]string{"Authorization": {"Bearer " + r.Agent.APIKey}}, nil); resp.StatusCode != 200 {
		t.Errorf("me: %d", resp.StatusCode)
	}
}

func TestTracesExport(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "registry.db")
	m := MustRunMain(t, &Main{DatabaseURL: db})
	c := apitest.New(t, m.URL)
	var r struct {
		Agent struct {
			APIKey string `json:"api_key"`
		} `json:"agent"`
	}
	c.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"tracer"}`), map[string][]string{"Content-Type": {"application/json"}}, &r)
	auth := map[string][]string{"Authorization": {"Bearer " + r.Agent.APIKey}, "Content-Type": {"application/json"}}
	for _, step := range []string{"register", "start", "submit"} {
		body := strings.NewReader("")
		if step == "submit" {
			body = strings.NewReader("{}")
		}
		if code := c.Do("POST", "/api/v1/evaluations/identity-check/"+step, body, auth, nil).StatusCode; code >= 300 {
			t.Fatalf("%s: %d", step, code)
		}
	}
	code, out, errOut := runSip(t, "traces", "export", "--db", db)
	if code != exitOK || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"event":"evaluation_result"`) || !strings.Contains(out, `"exit_code":1,`) || !strings.Contains(out, `"outcome":"failed"`) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runSip(t, "traces", "export", "--db", db, "--since", "2999-01-01T00:00:00Z"); code != exitOK || out != "" {
		t.Errorf("--since in the future: %d %q", code, out)
	}
	if code, _, _ := runSip(t, "traces", "export", "--since", "yesterday", "--db", db); code != exitUsage {
		t.Errorf("bad --since: %d", code)
	}
	if code, _, _ := runSip(t, "traces"); code != exitUsage {
		t.Errorf("no subcommand: %d", code)
	}
}

func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, want, err string
	}{
		{"", "[]", ""},
		{"10.0.0.0/8", "[10.0.0.0/8]", ""},
		{" 192.0.2.7 , 2001:db8::/32", "[192.0.2.7/32 2001:db8::/32]", ""},
		{"2001:db8::1", "[2001:db8::1/128]", ""},
		{"10.0.0.0/33", "", "neither an address nor a CIDR range"},
		{"proxy.internal", "", "neither an address nor a CIDR range"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := trustedProxies(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				return
			}
			var s []string
			for _, n := range got {
				s = append(s, n.String())
			}
			if err != nil || "["+strings.Join(s, " ")+"]" != tt.want {
				t.Errorf("got %v, %v; want %s", s, err, tt.want)
			}
		})
	}
}
