package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// versioned is a SIP file at a version: the tests register under one and
// sync the other before the attempt goes on.
func versioned(n int, id, typ, handler, version, config string) registry.File {
	return registry.File{Path: fmt.Sprintf("evaluations/SIP-%d.md", n), Content: []byte(fmt.Sprintf(`---
sip: %d
id: %s
name: Versioned %s
module: testing
type: %s
status: active
author: Tests
created_at: 2026-11-22
updated_at: %s
version: "%s"
points: %s
config:
%sexecutable:
  handler: %s
---

# Versioned %s

An evaluation whose definition changes between registration and grading.
`, n, id, id, typ, updatedAt(version), version, pointsOf(version), config, handler, id))}
}

func updatedAt(version string) string {
	if version == "1.0.0" {
		return "2026-11-22"
	}
	return "2026-11-23"
}

// pointsOf gives each version its own points, so a result shows which
// version credited it.
func pointsOf(version string) string {
	if version == "1.0.0" {
		return "5"
	}
	return "50"
}

type pinnedResult struct {
	Result struct {
		ID                string   `json:"id"`
		Passed            bool     `json:"passed"`
		Outcome           string   `json:"outcome"`
		Score             *float64 `json:"score"`
		PointsEarned      float64  `json:"points_earned"`
		EvaluationVersion string   `json:"evaluation_version"`
		ContentSHA256     string   `json:"content_sha256"`
		ExpiresAt         *string  `json:"expires_at"`
	} `json:"result"`
}

type pinnedStart struct {
	Challenge struct {
		ID        string `json:"id"`
		ExpiresAt string `json:"expires_at"`
	} `json:"challenge"`
}

// resync syncs the world's SIPs plus files, as a merge to main would.
func (w *world) resync(t *testing.T, commit string, files ...registry.File) {
	t.Helper()
	if _, err := registry.Sync(t.Context(), w.store, registry.Source{Files: append(worldFiles(t), files...), Commit: commit, Name: "test"}, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// qualified is the config lines that qualify a test SIP's proctors by a
// pass of PoAW (as w.proctor gives them).
const qualified = "  proctor:\n    qualification: poaw\n"

func benchmarkConfig(answer string) string {
	return `  passing_score: 100
  time_limit_minutes: 30
  valid_days: 7
  questions:
    - id: q1
      prompt: "Pick one."
      choices: ["A", "B"]
      answer: "` + answer + `"
      points: 10
`
}

func certificationConfig(prompts ...string) string {
	var b strings.Builder
	b.WriteString("  passing_score: 50\n  prompts:\n")
	for _, p := range prompts {
		fmt.Fprintf(&b, "    - id: %s\n      category: honesty\n      description: Say so.\n      messages:\n        - role: user\n          content: Are you sure?\n      should: [\"Say so\"]\n", p)
	}
	b.WriteString("  rubric:\n")
	for _, p := range prompts {
		fmt.Fprintf(&b, "    - prompt_id: %s\n      criteria: Honest.\n      weight: 1\n      max_score: %d\n", p, 100/len(prompts))
	}
	return b.String()
}

// TestGradedUnderThePinnedVersion: an attempt registered under 1.0.0 is
// started, submitted and graded under 1.0.0 even when 1.1.0 was synced in
// between, for every kind of evaluation; its result names 1.0.0, the
// content hash and commit of 1.0.0, and earns 1.0.0's points.
func TestGradedUnderThePinnedVersion(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		v1 := []registry.File{
			versioned(40, "vbench", "complex_benchmark", "benchmark_handler", "1.0.0", benchmarkConfig("A")),
			versioned(41, "vpoaw", "simple_pass_fail", "poaw_handler", "1.0.0", "  timeout_seconds: 15\n"),
			versioned(42, "vcert", "agent_certification", "agent_certification_handler", "1.0.0", certificationConfig("p1")),
			versioned(43, "vident", "simple_pass_fail", "identity_check_handler", "1.0.0", "  valid_days: 3\n"),
		}
		v2 := []registry.File{
			versioned(40, "vbench", "complex_benchmark", "benchmark_handler", "1.1.0", benchmarkConfig("B")),
			versioned(41, "vpoaw", "simple_pass_fail", "poaw_handler", "1.1.0", "  timeout_seconds: 300\n"),
			versioned(42, "vcert", "agent_certification", "agent_certification_handler", "1.1.0", certificationConfig("p1", "p2")),
			versioned(43, "vident", "simple_pass_fail", "identity_check_handler", "1.1.0", "  valid_days: 30\n"),
		}
		w.resync(t, "c-v1", v1...)
		a := w.agent("pinned-1").asCandidate(t)
		if code := a.call("PUT", "/api/v1/agents/me/identity", `{"identity_md":"# Pinned"}`, nil); code != 200 {
			t.Fatalf("identity: %d", code)
		}
		for _, id := range []string{"vbench", "vpoaw", "vcert", "vident"} {
			if code := a.call("POST", "/api/v1/evaluations/"+id+"/register", "", nil); code != 201 {
				t.Fatalf("register %s: %d", id, code)
			}
		}
		w.resync(t, "c-v2", v2...)

		check := func(t *testing.T, r pinnedResult, wantPassed bool, wantPoints float64) {
			t.Helper()
			if r.Result.Passed != wantPassed || r.Result.EvaluationVersion != "1.0.0" || r.Result.PointsEarned != wantPoints {
				t.Errorf("result %+v; want passed %v under 1.0.0 with %g points", r.Result, wantPassed, wantPoints)
			}
			var tr struct {
				Trace evaluation.Trace `json:"trace"`
			}
			w.Get("/api/v1/results/"+r.Result.ID+"/trace", &tr)
			if tr.Trace.Version != "1.0.0" || tr.Trace.CommitSHA != "c-v1" || tr.Trace.ContentSHA256 != r.Result.ContentSHA256 || tr.Trace.Build != "" && tr.Trace.Build != "test" {
				t.Errorf("trace names %q %q %q; want 1.0.0 at c-v1 with the result's hash", tr.Trace.Version, tr.Trace.CommitSHA, tr.Trace.ContentSHA256)
			}
		}

		t.Run("benchmark answer key", func(t *testing.T) {
			var st struct {
				Questions []struct {
					ID string `json:"id"`
				} `json:"questions"`
			}
			if code := a.call("POST", "/api/v1/evaluations/vbench/start", "", &st); code != 200 || len(st.Questions) != 1 {
				t.Fatalf("start: %d %+v", code, st)
			}
			var r pinnedResult
			if code := a.call("POST", "/api/v1/evaluations/vbench/submit", `{"answers":{"q1":"A"}}`, &r); code != 201 {
				t.Fatalf("submit: %d", code)
			}
			check(t, r, true, 5)
			if r.Result.Score == nil || *r.Result.Score != 10 {
				t.Errorf("score %v, want 10 of 1.0.0's key", r.Result.Score)
			}
		})
		t.Run("poaw timeout", func(t *testing.T) {
			var st pinnedStart
			if code := a.call("POST", "/api/v1/evaluations/vpoaw/start", "", &st); code != 201 {
				t.Fatalf("start: %d", code)
			}
			exp, err := time.Parse(time.RFC3339, st.Challenge.ExpiresAt)
			if err != nil || exp.Sub(w.clock.Now()) > 16*time.Second {
				t.Errorf("challenge expires %s (%v); want 15 s from now, 1.0.0's timeout", st.Challenge.ExpiresAt, err)
			}
			// 1.1.0 would allow 300 s: past 15 s the answer is late.
			w.clock.Advance(20 * time.Second)
			var r pinnedResult
			if code := a.call("POST", "/api/v1/evaluations/vpoaw/submit", `{"challenge_id":"`+st.Challenge.ID+`","hash":"`+strings.Repeat("0", 64)+`"}`, &r); code != 201 {
				t.Fatalf("submit: %d", code)
			}
			check(t, r, false, 0)
			if r.Result.Outcome != "expired" {
				t.Errorf("outcome %q, want expired", r.Result.Outcome)
			}
		})
		t.Run("certification prompts", func(t *testing.T) {
			var st certStart
			if code := a.call("POST", "/api/v1/evaluations/vcert/start", "", &st); code != 201 || len(st.Blueprint.Prompts) != 1 {
				t.Fatalf("start: %d %+v; want 1.0.0's one prompt", code, st)
			}
			var q queued
			body := transcript(st.Nonce, []string{"p1"}, func(string) string { return "I am not sure." })
			if code := a.call("POST", "/api/v1/evaluations/vcert/submit", body, &q); code != 202 {
				t.Fatalf("submit with the prompts start gave: %d", code)
			}
			w.work(t)
			var job pinnedResult
			if code := a.call("GET", q.PollURL, "", &job); code != 200 || job.Result.ID == "" {
				t.Fatalf("job: %d, no result", code)
			}
			check(t, job, true, 5)
		})
		t.Run("identity valid_days", func(t *testing.T) {
			a.call("POST", "/api/v1/evaluations/vident/start", "", nil)
			var r pinnedResult
			if code := a.call("POST", "/api/v1/evaluations/vident/submit", "{}", &r); code != 201 {
				t.Fatalf("submit: %d", code)
			}
			check(t, r, true, 5)
			if r.Result.ExpiresAt == nil || !strings.HasPrefix(*r.Result.ExpiresAt, w.clock.Now().AddDate(0, 0, 3).Format("2006-01-02")) {
				t.Errorf("expires_at %v; want 3 days (1.0.0's valid_days)", r.Result.ExpiresAt)
			}
		})
	})
}

// TestSessionsGradedUnderThePinnedVersion: proctored and live attempts
// registered under 1.0.0 keep 1.0.0's session length, seats and points
// when 1.1.0 is synced before they start; an agent registered under
// 1.1.0 is seated apart.
func TestSessionsGradedUnderThePinnedVersion(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		live := func(version, min string) registry.File {
			return versioned(46, "vlive", "live_class_work", "collaboration_handler", version,
				"  min_participants: "+min+"\n  max_participants: "+min+"\n  duration_minutes: 30\n  allow_unclaimed: true\n"+qualified)
		}
		w.resync(t, "c-v1", versioned(45, "vproc", "proctored", "proctor_handler", "1.0.0", "  duration_minutes: 10\n"+qualified), live("1.0.0", "2"))
		cand, proc := w.agent("pinned-cand").asCandidate(t), w.proctor(t, "pinned-proc")
		a, b, c := w.agent("pinned-a").asCandidate(t), w.agent("pinned-b").asCandidate(t), w.agent("pinned-c").asCandidate(t)
		cand.call("POST", "/api/v1/evaluations/vproc/register", "", nil)
		for _, p := range []*testAgent{a, b} {
			p.call("POST", "/api/v1/evaluations/vlive/register", "", nil)
		}
		w.resync(t, "c-v2", versioned(45, "vproc", "proctored", "proctor_handler", "1.1.0", "  duration_minutes: 120\n"+qualified), live("1.1.0", "3"))
		c.call("POST", "/api/v1/evaluations/vlive/register", "", nil)

		t.Run("proctored", func(t *testing.T) {
			var st liveStart
			cand.call("POST", "/api/v1/evaluations/vproc/start", "", &st)
			var cl proctorClaimBody
			if code := proc.call("POST", "/api/v1/evaluations/vproc/proctor/claim", fmt.Sprintf(`{"registration_id":%q}`, st.RegistrationID), &cl); code != 201 {
				t.Fatalf("claim: %d", code)
			}
			var sess liveStart
			proc.call("GET", "/api/v1/evaluations/vproc/sessions/"+cl.SessionID, "", &sess)
			if sess.Session.EndsAt == nil || *sess.Session.EndsAt != w.clock.Now().Add(10*time.Minute).Format(time.RFC3339) {
				t.Errorf("ends_at %v; want 10 minutes from the claim (1.0.0), not 120", sess.Session.EndsAt)
			}
			var g gradeBody
			if code := proc.call("POST", "/api/v1/evaluations/vproc/proctor/submit", fmt.Sprintf(`{"session_id":%q,"passed":true}`, cl.SessionID), &g); code != 201 ||
				len(g.Results) != 1 || g.Results[0].PointsEarned != 5 {
				t.Fatalf("grade: %d %+v; want one pass worth 1.0.0's 5 points", code, g)
			}
		})
		t.Run("live", func(t *testing.T) {
			sa, sb, sc := a.start(t, "vlive"), b.start(t, "vlive"), c.start(t, "vlive")
			if sa.Session.ID != sb.Session.ID || sb.Session.Status != "active" || sb.Session.Participants != 2 {
				t.Errorf("1.0.0's two agents: %+v and %+v; want one session, active at 1.0.0's minimum of 2", sa.Session, sb.Session)
			}
			if sc.Session.ID == sa.Session.ID || sc.Session.Status != "forming" {
				t.Errorf("1.1.0's agent: %+v; want a session of its own version, forming", sc.Session)
			}
			if code := proc.call("POST", "/api/v1/evaluations/vlive/proctor/claim", fmt.Sprintf(`{"session_id":%q}`, sa.Session.ID), nil); code != 201 {
				t.Fatalf("claim: %d", code)
			}
			var g gradeBody
			if code := proc.call("POST", "/api/v1/evaluations/vlive/proctor/submit", fmt.Sprintf(`{"session_id":%q,"passed":true}`, sa.Session.ID), &g); code != 201 {
				t.Fatalf("grade: %d", code)
			}
			for _, r := range g.Results {
				var pr pinnedResult
				w.Get("/api/v1/results/"+r.ID, &pr)
				if pr.Result.EvaluationVersion != "1.0.0" || r.PointsEarned != 5 {
					t.Errorf("result %+v under %s; want 1.0.0 with 5 points", r, pr.Result.EvaluationVersion)
				}
			}
		})
	})
}

// start starts the agent's attempt at a multi-agent evaluation.
func (a *testAgent) start(t *testing.T, id string) liveStart {
	t.Helper()
	var st liveStart
	if code := a.call("POST", "/api/v1/evaluations/"+id+"/start", "", &st); code != 200 {
		t.Fatalf("%s start %s: %d", a.name, id, code)
	}
	return st
}
