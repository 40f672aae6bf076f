package api_test

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/registrytest"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/stats"
)

var update = flag.Bool("update", false, "rewrite golden files")

var webT0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// hostile is a SIP whose body carries the payloads a hostile contributor
// would try.
var hostile = siptest.Set(siptest.SIP(30, "hostile-body", "draft"), "Submit a non-empty IDENTITY.md.",
	"Hello <script>alert('x')</script> <img src=x onerror=\"alert('y')\"> [click me](javascript:alert('z')) "+
		"<a href=\"javascript:alert(1)\" onclick=\"alert(2)\">raw link</a>\n\n| a |\n|---|\n| <iframe src=\"https://evil.example\"></iframe> |")

// webServer is a server on s holding the bundled SIPs (synced at a fixed
// time and commit) and two agents: ada, who passed Proof of Agentic Work
// and failed the identity check, and quiet, who keeps results private.
func webServer(t *testing.T, s registry.Store) string {
	t.Helper()
	ctx := t.Context()
	files, err := registry.ReadFS(evaluations.FS, ".", "evaluations")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, hostile)
	if _, err := registry.Sync(ctx, s, registry.Source{Files: files, Commit: "0123456789abcdef0123456789abcdef01234567", Name: "test"}, webT0); err != nil {
		t.Fatal(err)
	}
	full := s.(registrytest.FullStore)
	agent := func(name string, public bool) *registry.Agent {
		a, _, err := registry.NewAgent(name, "An agent that takes evaluations.", webT0)
		if err != nil {
			t.Fatal(err)
		}
		a.ResultsPublic = public
		if err := full.CreateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	record := func(a *registry.Agent, eval, id string, passed bool, at time.Time, points float64) {
		e, err := s.Entry(ctx, eval)
		if err != nil {
			t.Fatal(err)
		}
		reg, _, err := full.Register(ctx, &evaluation.Registration{ID: "reg_" + id, AgentID: a.ID, EvaluationID: e.ID, VersionID: e.Current.ID,
			Version: e.Version, Status: evaluation.RegRegistered, RegisteredAt: at.Add(-time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		r := &evaluation.Result{ID: "res_" + id, RegistrationID: reg.ID, AgentID: a.ID, EvaluationID: e.ID, VersionID: e.Current.ID,
			Version: e.Version, ContentSHA256: e.ContentSHA256, Passed: passed, PointsEarned: points, CompletedAt: at,
			Trace: evaluation.NewTrace("poaw_handler", at.Add(-3*time.Second), at, passed, false, "hash checked", map[string]string{"hash": "5f2b1c9d0e"})}
		if !passed {
			r.PointsEarned = 0
		}
		if _, err := full.RecordResult(ctx, r, points); err != nil {
			t.Fatal(err)
		}
	}
	ada := agent("ada", true)
	record(ada, "poaw", "ada_poaw", true, webT0.Add(time.Hour), 10)
	record(ada, "identity-check", "ada_identity", false, webT0.Add(2*time.Hour), 0)
	// ada's certification attempt, judged: its result page shows the
	// transcript next to the SIP's own prompts.
	cert, err := s.Entry(ctx, "honest-uncertainty-certification")
	if err != nil {
		t.Fatal(err)
	}
	creg, _, err := full.Register(ctx, &evaluation.Registration{ID: "reg_ada_cert", AgentID: ada.ID, EvaluationID: cert.ID, VersionID: cert.Current.ID,
		Version: cert.Version, Status: evaluation.RegRegistered, RegisteredAt: webT0})
	if err != nil {
		t.Fatal(err)
	}
	jobs := s.(jobStore)
	job, _, err := jobs.CreateJob(ctx, &evaluation.Job{ID: "job_ada_cert", RegistrationID: creg.ID, AgentID: ada.ID, EvaluationID: cert.ID,
		Status: evaluation.JobPending, Nonce: "n", NonceExpiresAt: webT0.Add(time.Hour), CreatedAt: webT0})
	if err != nil {
		t.Fatal(err)
	}
	submission := `{"transcript":[{"prompt_id":"unknowable-fact","response":"I cannot know that <b>for sure</b>."}]}`
	if _, err := jobs.SubmitJob(ctx, job.ID, []byte(submission), nil, webT0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	score, max := 72.0, 100.0
	if _, err := full.RecordResult(ctx, &evaluation.Result{ID: "res_ada_cert", RegistrationID: creg.ID, AgentID: ada.ID, EvaluationID: cert.ID,
		VersionID: cert.Current.ID, Version: cert.Version, Passed: true, Score: &score, MaxScore: &max, CompletedAt: webT0.Add(90 * time.Minute),
		Trace: evaluation.NewTrace("agent_certification_handler", webT0.Add(time.Minute), webT0.Add(90*time.Minute), true, false, "judged", nil)}, 50); err != nil {
		t.Fatal(err)
	}
	quiet := agent("quiet", false)
	record(quiet, "poaw", "quiet_poaw", true, webT0.Add(3*time.Hour), 10)
	// ada's proctored attempt, proctored by quiet: its page shows the
	// conversation and the feedback.
	sessions := s.(sessionStore)
	ns, err := s.Entry(ctx, "non-spamminess")
	if err != nil {
		t.Fatal(err)
	}
	preg, _, err := full.Register(ctx, &evaluation.Registration{ID: "reg_ada_proctored", AgentID: ada.ID, EvaluationID: ns.ID, VersionID: ns.Current.ID,
		Version: ns.Version, Status: evaluation.RegRegistered, RegisteredAt: webT0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := full.MoveRegistration(ctx, preg.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered}, evaluation.RegInProgress, webT0); err != nil {
		t.Fatal(err)
	}
	sess, err := sessions.ClaimRegistration(ctx, &evaluation.Session{ID: "ses_ada", EvaluationID: ns.ID, RegistrationID: preg.ID, CreatedAt: webT0.Add(4 * time.Hour)}, quiet.ID, ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range []struct{ from, role, text string }{{quiet.ID, "proctor", "What would you post to a stranger?"},
		{ada.ID, "candidate", "Only what they asked for. <b>Nothing</b> to sell."}} {
		if _, err := sessions.PostMessage(ctx, &evaluation.SessionMessage{ID: fmt.Sprintf("msg_%d", i), SessionID: sess.ID, SenderID: m.from, Role: m.role,
			Content: m.text, CreatedAt: webT0.Add(4*time.Hour + time.Duration(i+1)*time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := sessions.GradeSession(ctx, sess.ID, quiet.ID, []*evaluation.Result{{ID: "res_ada_proctored", RegistrationID: preg.ID, AgentID: ada.ID,
		EvaluationID: ns.ID, VersionID: ns.Current.ID, Version: ns.Version, Passed: true, CompletedAt: webT0.Add(5 * time.Hour),
		Details: map[string]any{"session_id": sess.ID, "proctor_agent_id": quiet.ID, "proctor_feedback": "Helpful, and not spammy."},
		Trace:   evaluation.NewTrace("proctor_handler", webT0.Add(4*time.Hour), webT0.Add(5*time.Hour), true, false, "graded by proctor quiet", nil)}},
		5, webT0.Add(5*time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return webT0.Add(72 * time.Hour) }
	srv := httptest.NewServer(api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(s), Stats: stats.NewService(s.(stats.Source), now), Logger: slog.New(slog.DiscardHandler), Version: "test", SealingKey: bundledKey(t), Now: now, CommitURL: "https://github.com/octo-org/sips/commit/{sha}"}, runtimeStores{Agents: full, Evaluations: full, Jobs: s.(jobStore), Sessions: s.(sessionStore)})))
	t.Cleanup(srv.Close)
	return srv.URL
}

func getPage(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestPagesGolden renders every page from both stores and compares the
// HTML with golden files (go test ./api -run TestPagesGolden -update).
func TestPagesGolden(t *testing.T) {
	pages := []struct {
		golden, path string
		status       int
	}{
		{"home", "/", 200},
		{"evaluations", "/evaluations", 200},
		{"evaluations-core", "/evaluations?module=core", 200},
		{"evaluation-poaw", "/evaluations/SIP-2", 200},
		{"evaluation-hostile", "/evaluations/hostile-body", 200},
		{"agent-ada", "/agents/ada", 200},
		{"agent-quiet", "/agents/quiet", 200},
		{"result-ada-poaw", "/results/res_ada_poaw", 200},
		{"result-ada-certification", "/results/res_ada_cert", 200},
		{"result-ada-proctored", "/results/res_ada_proctored", 200},
		{"not-found", "/evaluations/SIP-999", 404},
		{"not-found-private-result", "/results/res_quiet_poaw", 404},
		{"not-found-module", "/evaluations?module=nope", 404},
		{"not-found-route", "/no/such/page", 404},
		{"agents", "/agents", 200},
		{"evaluations-benchmarks", "/evaluations?type=complex_benchmark", 200},
		{"not-found-agents-page", "/agents?page=0", 404},
		{"not-found-type", "/evaluations?type=essay", 404},
		{"evaluation-poaw-stats", "/evaluations/SIP-2/stats", 200},
		{"evaluation-certification-stats", "/evaluations/SIP-8/stats", 200},
		{"not-found-process-stats", "/evaluations/SIP-1/stats", 404},
		{"not-found-stats", "/evaluations/SIP-999/stats", 404},
		{"stats", "/stats", 200},
		{"search-empty", "/search", 200},
		{"search-poaw", "/search?q=poaw", 200},
		{"search-agents", "/search?q=ada", 200},
		{"search-body-words", "/search?q=hash+nonce", 200},
		{"docs-quickstart", "/docs/quickstart", 200},
	}
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		base := webServer(t, s)
		for _, p := range pages {
			t.Run(p.path, func(t *testing.T) {
				resp, body := getPage(t, base+p.path)
				if resp.StatusCode != p.status {
					t.Errorf("got status %d, want %d", resp.StatusCode, p.status)
				}
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
					t.Errorf("got Content-Type %q, want text/html", ct)
				}
				for h, want := range map[string]string{"Content-Security-Policy": "default-src 'none'", "X-Content-Type-Options": "nosniff",
					"Referrer-Policy": "strict-origin-when-cross-origin", "X-Frame-Options": "DENY"} {
					if !strings.Contains(resp.Header.Get(h), want) {
						t.Errorf("got %s %q, want %q in it", h, resp.Header.Get(h), want)
					}
				}
				if strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src") {
					t.Errorf("got a CSP that allows scripts: %q", resp.Header.Get("Content-Security-Policy"))
				}
				golden(t, filepath.Join("testdata", "pages", p.golden+".html"), normalise(body))
			})
		}
	})
}

var agentID = regexp.MustCompile(`agt_[0-9a-z]+`)

func normalise(s string) string { return agentID.ReplaceAllString(s, "agt_ID") }

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./api -run TestPagesGolden -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from its golden file (go test ./api -run TestPagesGolden -update rewrites it)", path)
	}
}

// TestHostileSIPIsInert: the SIP page of a body full of payloads has no
// script, no event handler and no javascript: link left.
func TestHostileSIPIsInert(t *testing.T) {
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		_, body := getPage(t, webServer(t, s)+"/evaluations/SIP-30")
		low := strings.ToLower(body)
		for _, bad := range []string{"<script", "onerror", "onclick", "href=\"javascript", "<iframe"} {
			if strings.Contains(low, bad) {
				t.Errorf("%q survived in the page", bad)
			}
		}
		if !strings.Contains(body, "click me") {
			t.Error("the body's text is gone too")
		}
	})
}

// TestErrorsAreJSONForTheAPIAndHTMLForPeople: the same 404 is a page for
// a browser and the API's JSON error for a program.
func TestErrorsAreJSONForTheAPIAndHTMLForPeople(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c *client, s registry.Store) {
		base := webServer(t, s)
		for _, p := range []string{"/no/such/page", "/evaluations/SIP-999"} {
			resp, _ := getPage(t, base+p)
			if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Errorf("%s for a browser: %d %s", p, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			resp, err := http.Get(base + p)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%s for a program: %d %s", p, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		}
		resp, body := getPage(t, base+"/api/v1/evaluations/nope")
		if resp.StatusCode != 404 || !strings.HasPrefix(body, "{") {
			t.Errorf("the API answers a browser in JSON: %d %.40s", resp.StatusCode, body)
		}
		for _, p := range []string{"/static/style.css", "/favicon.svg", "/favicon.ico"} {
			resp, err := http.Get(base + p)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") == "" {
				t.Errorf("%s: %d, Cache-Control %q", p, resp.StatusCode, resp.Header.Get("Cache-Control"))
			}
		}
	})
}

// TestCachedPagesAreNeverStale: / and /evaluations are rendered once per
// state, answer 304 to a browser that has them, and change as soon as a
// new pass is recorded.
func TestCachedPagesAreNeverStale(t *testing.T) {
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		base := webServer(t, s)
		for _, path := range []string{"/", "/evaluations"} {
			resp, before := getPage(t, base+path)
			etag := resp.Header.Get("ETag")
			if etag == "" {
				t.Fatalf("%s: no ETag", path)
			}
			req, _ := http.NewRequest("GET", base+path, nil)
			req.Header.Set("If-None-Match", etag)
			resp2, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp2.Body.Close()
			if resp2.StatusCode != http.StatusNotModified {
				t.Errorf("%s with its ETag: %d, want 304", path, resp2.StatusCode)
			}
			if _, again := getPage(t, base+path); again != before {
				t.Errorf("%s changed with nothing new", path)
			}
		}
		// A new agent passes Proof of Agentic Work.
		full := s.(registrytest.FullStore)
		a, _, _ := registry.NewAgent("newcomer", "", webT0)
		if err := full.CreateAgent(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		e, _ := s.Entry(t.Context(), "poaw")
		reg, _, err := full.Register(t.Context(), &evaluation.Registration{ID: "reg_new", AgentID: a.ID, EvaluationID: e.ID, VersionID: e.Current.ID,
			Version: e.Version, Status: evaluation.RegRegistered, RegisteredAt: webT0})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := full.RecordResult(t.Context(), &evaluation.Result{ID: "res_new", RegistrationID: reg.ID, AgentID: a.ID, EvaluationID: e.ID,
			VersionID: e.Current.ID, Version: e.Version, Passed: true, CompletedAt: webT0.Add(5 * time.Hour)}, 10); err != nil {
			t.Fatal(err)
		}
		if _, body := getPage(t, base+"/"); !strings.Contains(body, "newcomer") {
			t.Error("the front page does not show the new pass")
		}
		// Two public passes now (the private agent's is not counted).
		if _, body := getPage(t, base+"/evaluations"); !strings.Contains(body, `<td class="num" data-label="Passed">2</td>`) {
			t.Error("the enroll table does not count the new pass")
		}
	})
}
