package api_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/registrytest"
)

// TestStatisticsRespectPrivacyAndStayCurrent: aggregate figures count
// every attempt, leaderboards name only public agents (asked at each
// view, so hiding one's results takes effect at once), and a new result
// shows at the next view.
func TestStatisticsRespectPrivacyAndStayCurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		ctx := t.Context()
		base := webServer(t, s)
		full := s.(registrytest.FullStore)
		_, body := getPage(t, base+"/evaluations/SIP-2/stats")
		for _, want := range []string{"<dt>Agents</dt><dd>2</dd>", `href="/agents/ada"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the statistics page lacks %q", want)
			}
		}
		if strings.Contains(body, "quiet") {
			t.Error("a private agent is named on a leaderboard")
		}
		quiet, err := full.AgentByName(ctx, "quiet")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/api/v1/evaluations/poaw/stats", "/api/v1/evaluations/poaw/stats?asserted=include"} {
			if _, api := getPage(t, base+p); !strings.Contains(api, `"name":"ada"`) || strings.Contains(api, "quiet") || strings.Contains(api, quiet.ID) {
				t.Errorf("%s: want ada on the leaderboards and the private agent neither named nor by id: %s", p, api)
			}
		}

		ada, err := full.AgentByName(ctx, "ada")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := full.UpdateAgent(ctx, ada.ID, registry.AgentUpdate{ResultsPublic: new(false)}); err != nil {
			t.Fatal(err)
		}
		if _, body = getPage(t, base+"/evaluations/SIP-2/stats"); strings.Contains(body, `href="/agents/ada"`) {
			t.Error("an agent that hid its results is still on the leaderboard")
		}
		if _, api := getPage(t, base+"/api/v1/evaluations/poaw/stats"); strings.Contains(api, `"name":"ada"`) || strings.Contains(api, ada.ID) {
			t.Errorf("the statistics API still names an agent that hid its results: %s", api)
		}

		poaw, _ := full.Entry(ctx, "poaw")
		reg, _, err := full.Register(ctx, &evaluation.Registration{ID: "reg_new", AgentID: ada.ID, EvaluationID: poaw.ID, VersionID: poaw.Current.ID, RegisteredAt: webT0.Add(48 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := full.RecordResult(ctx, &evaluation.Result{ID: "res_new", RegistrationID: reg.ID, AgentID: ada.ID, EvaluationID: poaw.ID,
			VersionID: poaw.Current.ID, Version: poaw.Version, Outcome: evaluation.OutcomeFailed, CompletedAt: webT0.Add(49 * time.Hour),
			Trace: evaluation.NewTrace("poaw_handler", webT0.Add(48*time.Hour), webT0.Add(49*time.Hour), false, false, "wrong hash", nil)}, 0); err != nil {
			t.Fatal(err)
		}
		if _, body = getPage(t, base+"/evaluations/SIP-2/stats"); !strings.Contains(body, "<dt>Attempts</dt><dd>3</dd>") {
			t.Error("a new result is not counted at the next view")
		}
	})
}

// TestSearchTakesAnyInput: search answers every query with a page, never
// finds private agents, and cuts long queries.
func TestSearchTakesAnyInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		base := webServer(t, s)
		for _, c := range []struct {
			name, q       string
			want, exclude string
		}{
			{"a private agent", "quiet", "No public agent", `href="/agents/quiet"`},
			{"by number", "SIP-7", `href="/evaluations/SIP-7"`, ""},
			{"a bare number", "5", `href="/evaluations/SIP-5"`, ""},
			{"by module", "safety", "AI Safety Benchmark", ""},
			{"every word must match", "proof nosuchword", "No SIP matches", `href="/evaluations/SIP-2"`},
			{"wildcards are literal", "%_%", "No SIP matches", `href="/agents/ada"`},
			{"markup is escaped", `<script>alert(1)</script>`, "&lt;script&gt;", "<script>"},
			{"invalid UTF-8", "\xff\xfeada", `href="/agents/ada"`, ""},
			{"too long", strings.Repeat("a", 500), "Only the first 100 characters", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				resp, body := getPage(t, base+"/search?q="+url.QueryEscape(c.q))
				if resp.StatusCode != 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
				if !strings.Contains(body, c.want) {
					t.Errorf("the page lacks %q", c.want)
				}
				if c.exclude != "" && strings.Contains(body, c.exclude) {
					t.Errorf("the page holds %q", c.exclude)
				}
			})
		}
	})
}

// TestMetricsExportSuccessMetrics: /metrics carries the figures of /stats.
func TestMetricsExportSuccessMetrics(t *testing.T) {
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		_, body := getPage(t, webServer(t, s)+"/metrics")
		for _, want := range []string{"sip_agents 2", "sip_adoption_ratio 1", "sip_pass_ratio 0.8", `sip_attempts{outcome="passed"} 4`,
			`sip_evaluations{active="true",module="core"}`, "sip_modules_with_active_evaluations 3", "sip_contributors 2"} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

// TestStatisticsUnderConcurrentResults: pages viewed while results are
// recorded never fail, and the view after the last result counts every
// one of them (the figures are recomputed when the mark moves, and
// concurrent misses compute once).
func TestStatisticsUnderConcurrentResults(t *testing.T) {
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		ctx := t.Context()
		base := webServer(t, s)
		full := s.(registrytest.FullStore)
		poaw, _ := full.Entry(ctx, "poaw")
		const writers, each = 4, 5
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					a, _, err := registry.NewAgent(fmt.Sprintf("conc-%d-%d", w, i), "", webT0)
					if err == nil {
						err = full.CreateAgent(ctx, a)
					}
					if err != nil {
						t.Error(err)
						return
					}
					reg, _, err := full.Register(ctx, &evaluation.Registration{ID: fmt.Sprintf("reg_c%d_%d", w, i), AgentID: a.ID, EvaluationID: poaw.ID,
						VersionID: poaw.Current.ID, RegisteredAt: webT0.Add(time.Hour)})
					if err == nil {
						_, err = full.RecordResult(ctx, &evaluation.Result{ID: fmt.Sprintf("res_c%d_%d", w, i), RegistrationID: reg.ID, AgentID: a.ID,
							EvaluationID: poaw.ID, VersionID: poaw.Current.ID, Version: poaw.Version, Outcome: evaluation.OutcomeFailed,
							CompletedAt: webT0.Add(2 * time.Hour), Trace: evaluation.Trace{Status: "failure"}}, 0)
					}
					if err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		for range 3 {
			wg.Go(func() {
				for range 10 {
					if resp, _ := getPage(t, base+"/evaluations/SIP-2/stats"); resp.StatusCode != 200 {
						t.Errorf("a view during writes: %d", resp.StatusCode)
					}
				}
			})
		}
		wg.Wait()
		// webServer's agents: ada passed, quiet passed (2 attempts)
		want := fmt.Sprintf("<dt>Attempts</dt><dd>%d</dd>", 2+writers*each)
		if _, body := getPage(t, base+"/evaluations/SIP-2/stats"); !strings.Contains(body, want) {
			t.Errorf("after the writes the page lacks %q", want)
		}
	})
}
