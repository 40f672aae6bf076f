package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/registry/judge"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fullServer runs sip serve with every part that has metrics: the GitHub
// App (on a fake GitHub), a judge and the legacy vetting endpoints; it
// has received a webhook, a legacy call and a page request.
func fullServer(t *testing.T) *Main {
	t.Helper()
	gh := githubtest.New(t)
	files := bundledRepo()
	gh.CreateRepo("octo-org", "sips", files)
	const secret = "s3cret"
	m := MustRunMain(t, &Main{
		GitHub:        &bot.Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, WebhookSecrets: []string{secret}, APIURL: gh.URL, Repository: "octo-org/sips"},
		Judge:         &judge.Client{URL: "http://127.0.0.1:1", Model: "m"},
		LegacyVetting: api.LegacyVetting{Sunset: time.Now().Add(time.Hour)},
	})
	body := []byte(`{"zen":"Keep it logically awesome."}`)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, _ := http.NewRequest(http.MethodPost, m.URL+"/webhooks/github", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-GitHub-Delivery", "delivery-1")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	for _, r := range []*http.Request{req,
		must(http.NewRequest(http.MethodPost, m.URL+"/api/v1/agents/vetting/start", nil)),
		must(http.NewRequest(http.MethodGet, m.URL+"/api/v1/evaluations", nil))} {
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	return m
}

// eventually waits for cond, failing the test with what describe says.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// scrape reads /metrics and parses it with Prometheus's own parser.
func scrape(t *testing.T, m *Main) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	resp, err := http.Get(m.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, b)
	}
	return string(b), mfs
}

// keptLabels are the labels whose values the golden file shows: those the
// code enumerates. Other values (routes, events, status codes, versions)
// depend on what the server did, and every number on when.
var keptLabels = map[string]bool{"le": true, "quantile": true, "status": true, "kind": true}

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// normalise keeps an exposition's HELP and TYPE lines and the shape of its
// samples, each once: names, label names, enumerated label values, and no
// numbers.
func normalise(exposition string) string {
	var out []string
	seen := map[string]bool{}
	for line := range strings.Lines(exposition) {
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, "#") {
			out = append(out, line)
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			out = append(out, "unparsed: "+line)
			continue
		}
		labels := labelPair.ReplaceAllStringFunc(m[2], func(pair string) string {
			p := labelPair.FindStringSubmatch(pair)
			if keptLabels[p[1]] {
				return pair
			}
			return p[1] + `="…"`
		})
		shape := m[1]
		if labels != "" {
			shape += "{" + labels + "}"
		}
		if shape += " …"; !seen[shape] {
			seen[shape] = true
			out = append(out, shape)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// TestMetricsExposition: a real server's /metrics, parsed by Prometheus's
// parser, has every family of testdata/metrics.golden (names, types, help
// texts, label names, histogram buckets), and nothing else.
func TestMetricsExposition(t *testing.T) {
	t.Parallel()
	m := fullServer(t)
	golden := filepath.Join("testdata", "metrics.golden")
	want, err := os.ReadFile(golden)
	if err != nil && !*update {
		t.Fatal(err)
	}
	// Some samples appear only once the App has processed its first
	// deliveries, or once a request has been counted (after its answer).
	var got string
	deadline := time.Now().Add(45 * time.Second)
	for {
		text, mfs := scrape(t, m)
		got = normalise(text)
		ready := mfs["sip_github_deliveries_processed_total"] != nil && mfs["sip_github_api_requests_total"] != nil &&
			len(mfs["sip_http_requests_total"].GetMetric()) >= 4
		if (*update && ready) || (!*update && got == string(want)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("/metrics differs from %s (-want +got; go test ./cmd/sip -run TestMetricsExposition -update rewrites it):\n%s", golden, diff)
	}
}

// TestAlertRules: every sip metric the example alert rules use is served,
// with the type its use implies and the labels the rules match on.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	raw, err := os.ReadFile("../../docs/deploy/prometheus/alerts.yaml")
	if err != nil || yaml.Unmarshal(raw, &rules) != nil || len(rules.Groups) == 0 {
		t.Fatalf("alerts.yaml: %v", err)
	}
	m := fullServer(t)
	var served map[string]*dto.MetricFamily
	eventually(t, "the App's first deliveries and the requests counted", func() bool {
		_, served = scrape(t, m)
		return served["sip_github_deliveries_processed_total"] != nil && len(served["sip_http_requests_total"].GetMetric()) >= 3
	})
	use := regexp.MustCompile(`\b(sip_[a-z_]+)(?:\{([^}]*)\})?`)
	matcher := regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)`)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			for _, u := range use.FindAllStringSubmatch(r.Expr, -1) {
				name, want := u[1], dto.MetricType_GAUGE
				switch {
				case strings.HasSuffix(name, "_bucket"):
					name, want = strings.TrimSuffix(name, "_bucket"), dto.MetricType_HISTOGRAM
				case strings.HasSuffix(name, "_total"):
					want = dto.MetricType_COUNTER
				}
				mf := served[name]
				if mf == nil {
					t.Errorf("alert %s uses %s, which sip does not serve", r.Alert, u[1])
					continue
				}
				if mf.GetType() != want {
					t.Errorf("alert %s uses %s as a %s; sip serves a %s", r.Alert, u[1], want, mf.GetType())
				}
				labels := map[string]bool{}
				for _, l := range mf.GetMetric()[0].GetLabel() {
					labels[l.GetName()] = true
				}
				for _, l := range matcher.FindAllStringSubmatch(u[2], -1) {
					if !labels[l[1]] {
						t.Errorf("alert %s matches %s on %s, a label it does not have", r.Alert, name, l[1])
					}
				}
			}
		}
	}
}
