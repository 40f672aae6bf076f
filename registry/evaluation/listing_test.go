package evaluation_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/registrytest"
	"github.com/sipregistry/sip/registry/seal"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// store is what these tests use of a store: all of it.
type store interface {
	registrytest.FullStore
	evaluation.JobStore
	evaluation.JudgingStore
	evaluation.SessionStore
	evaluation.MessageStore
	evaluation.ProctorStore
	evaluation.SeatStore
}

// stores opens a fresh, migrated store of each kind.
var stores = map[string]func(t testing.TB) store{
	"sqlite":   func(t testing.TB) store { return sqlitetest.Open(t) },
	"postgres": func(t testing.TB) store { return postgrestest.Open(t) },
}

const otherIssuer = "did:web:other.example"

// checker is the credential checker of these tests: a credential whose
// text contains "revoked" fails again, as a revoked one would.
type checker struct{}

func (checker) Recheck(_ context.Context, raw []byte) error {
	if strings.Contains(string(raw), "revoked") {
		return errors.New("revoked")
	}
	return nil
}

// sip is a small SIP of the given type and status with extra config.
func sip(n int, id, typ, status, handler, config, prereqs string) registry.File {
	f := siptest.SIP(n, id, status)
	s := strings.Replace(string(f.Content), "type: simple_pass_fail", "type: "+typ, 1)
	s = strings.Replace(s, "executable:\n  handler: identity_check_handler", config+"executable:\n  handler: "+handler, 1)
	if prereqs != "" {
		s = strings.Replace(s, "author: Ada", "prerequisites:\n"+prereqs+"author: Ada", 1)
	}
	return registry.File{Path: f.Path, Content: []byte(s)}
}

// listingWorld is a registry with evaluations of every type and status,
// and a service over it.
func listingWorld(t *testing.T, st store, now time.Time) *evaluation.Service {
	t.Helper()
	files, err := registry.ReadFS(evaluations.FS, ".", "evaluations")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files,
		siptest.SIP(20, "drafty", "draft"),
		siptest.SIP(21, "old", "deprecated"),
		sip(22, "limited", "simple_pass_fail", "active", "identity_check_handler", "config:\n  max_attempts: 1\n", ""),
		sip(23, "cooldown", "simple_pass_fail", "active", "identity_check_handler", "config:\n  retry_after_hours: 24\n", ""),
		sip(24, "needs-cred", "simple_pass_fail", "active", "identity_check_handler", "",
			"  - credential: {issuer: "+otherIssuer+", achievement: https://other.example/evaluations/poaw}\n"),
		siptest.SIP(25, "needs-poaw", "active", "poaw"),
		sip(26, "open-live", "live_class_work", "active", "collaboration_handler",
			"config:\n  min_participants: 2\n  max_participants: 4\n  duration_minutes: 30\n  problem: Agree.\n  allow_unclaimed: true\n", ""),
		// Sealed to another registry's key: this one cannot grade it.
		siptest.SealedBenchmark(27, "sealed-elsewhere"),
		// Points for fixed answers take claimed agents unless the SIP opts
		// out; a practice benchmark (no points) takes anyone; any SIP may
		// opt in.
		sip(28, "mc-points", "complex_benchmark", "active", "benchmark_handler", mcConfig(""), ""),
		sip(29, "mc-opt-out", "complex_benchmark", "active", "benchmark_handler", mcConfig("  require_claimed: false\n"), ""),
		siptest.Set(sip(30, "mc-practice", "complex_benchmark", "active", "benchmark_handler", mcConfig(""), ""), "points: ", "points: 0"),
		sip(31, "opt-in", "simple_pass_fail", "active", "identity_check_handler", "config:\n  require_claimed: true\n", ""),
	)
	if _, err := registry.Sync(t.Context(), st, registry.Source{Files: files, Name: "test"}, now); err != nil {
		t.Fatal(err)
	}
	key, err := seal.ParseKey(evaluations.DevelopmentSealingKey)
	if err != nil {
		t.Fatal(err)
	}
	return evaluation.New(evaluation.Config{Versions: st, Agents: st, Attempts: st, Challenges: st, Results: st, Revocations: st, Presented: st, Jobs: st, Judging: st, Sessions: st, Messages: st, Proctoring: st, Seats: st,
		Now: func() time.Time { return now }, Key: key, Credentials: checker{}})
}

// mcConfig is a benchmark's config of one multiple-choice question, its
// answer in the clear, with extra config lines.
func mcConfig(extra string) string {
	return "config:\n" + extra + "  passing_score: 100\n  questions:\n    - id: q1\n      prompt: Which?\n      choices: [one, two]\n      answer: one\n      points: 1\n"
}

// agentKind makes one kind of agent the table covers.
type agentKind struct {
	name string
	make func(t *testing.T, st store, svc *evaluation.Service, id string)
}

func claim(t *testing.T, st store, id, owner string) {
	t.Helper()
	a, err := st.AgentByID(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimAgent(t.Context(), a.ClaimTokenHash, owner, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// finish gives the agent a result at the evaluation: registered through
// the service, ended in the store.
func finish(t *testing.T, st store, svc *evaluation.Service, agentID, evaluationID string, passed bool, at time.Time) {
	t.Helper()
	e, err := st.Entry(t.Context(), evaluationID)
	if err != nil {
		t.Fatal(err)
	}
	reg, _, err := svc.Register(t.Context(), agentID, e)
	if err != nil {
		t.Fatalf("register %s at %s: %v", agentID, evaluationID, err)
	}
	outcome := evaluation.OutcomeFailed
	if passed {
		outcome = evaluation.OutcomePassed
	}
	res := &evaluation.Result{ID: registry.NewID("res_"), RegistrationID: reg.ID, AgentID: agentID, EvaluationID: evaluationID,
		VersionID: reg.VersionID, Version: reg.Version, Passed: passed, Outcome: outcome, CompletedAt: at}
	if _, err := st.RecordResult(t.Context(), res, 0); err != nil {
		t.Fatal(err)
	}
}

func credentialOf(t *testing.T, st store, agentID, text string) {
	t.Helper()
	if err := st.PutExternalCredential(t.Context(), &evaluation.ExternalCredential{AgentID: agentID, Issuer: otherIssuer,
		Achievement: "https://other.example/evaluations/poaw", Subject: "https://other.example/agents/" + agentID,
		Credential: []byte(`{"note":"` + text + `"}`), RecordedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

var agentKinds = []agentKind{
	{"new", func(*testing.T, store, *evaluation.Service, string) {}},
	{"claimed", func(t *testing.T, st store, _ *evaluation.Service, id string) { claim(t, st, id, "owner-claimed") }},
	{"passed-poaw", func(t *testing.T, st store, svc *evaluation.Service, id string) {
		claim(t, st, id, "owner-poaw")
		finish(t, st, svc, id, "poaw", true, listingT0.Add(-time.Hour))
	}},
	{"unclaimed-passed-poaw", func(t *testing.T, st store, svc *evaluation.Service, id string) {
		finish(t, st, svc, id, "poaw", true, listingT0.Add(-time.Hour))
	}},
	{"credential", func(t *testing.T, st store, _ *evaluation.Service, id string) { credentialOf(t, st, id, "good") }},
	{"revoked-credential", func(t *testing.T, st store, _ *evaluation.Service, id string) { credentialOf(t, st, id, "revoked") }},
	{"private-passed-poaw", func(t *testing.T, st store, svc *evaluation.Service, id string) {
		private := false
		if _, err := st.UpdateAgent(t.Context(), id, registry.AgentUpdate{ResultsPublic: &private}); err != nil {
			t.Fatal(err)
		}
		finish(t, st, svc, id, "poaw", true, listingT0.Add(-time.Hour))
	}},
	{"over-the-limit", func(t *testing.T, st store, svc *evaluation.Service, id string) {
		// Two attempts where one is allowed: a limit lowered after them.
		finish(t, st, svc, id, "limited", false, listingT0.Add(-72*time.Hour))
		e, err := st.Entry(t.Context(), "limited")
		if err != nil {
			t.Fatal(err)
		}
		reg, _, err := st.Register(t.Context(), &evaluation.Registration{ID: registry.NewID("reg_"), AgentID: id, EvaluationID: e.ID,
			VersionID: e.Current.ID, RegisteredAt: listingT0.Add(-50 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.RecordResult(t.Context(), &evaluation.Result{ID: registry.NewID("res_"), RegistrationID: reg.ID, AgentID: id,
			EvaluationID: e.ID, VersionID: reg.VersionID, Version: reg.Version, Outcome: evaluation.OutcomeFailed,
			CompletedAt: listingT0.Add(-48 * time.Hour)}, 0); err != nil {
			t.Fatal(err)
		}
	}},
	{"attempts-used", func(t *testing.T, st store, svc *evaluation.Service, id string) {
		finish(t, st, svc, id, "limited", false, listingT0.Add(-48*time.Hour))
	}},
	{"passed-limited", func(t *testing.T, st store, svc *evaluation.Service, id string) {
		finish(t, st, svc, id, "limited", true, listingT0.Add(-48*time.Hour))
	}},
	{"failed-just-now", func(t *testing.T, st store, svc *evaluation.Service, id string) {
		finish(t, st, svc, id, "cooldown", false, listingT0.Add(-time.Hour))
	}},
	{"failed-long-ago", func(t *testing.T, st store, svc *evaluation.Service, id string) {
		finish(t, st, svc, id, "cooldown", false, listingT0.Add(-48*time.Hour))
	}},
	{"open-registration", func(t *testing.T, st store, svc *evaluation.Service, id string) {
		e, err := st.Entry(t.Context(), "identity-check")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.Register(t.Context(), id, e); err != nil {
			t.Fatal(err)
		}
	}},
}

var listingT0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// TestListingAgreesWithRegister: for every kind of agent and every
// evaluation, the listing's can_register and refusal are what Register
// does, on both stores.
func TestListingAgreesWithRegister(t *testing.T) {
	t.Parallel()
	// Outcomes the drift once got wrong, named: the refusal code the
	// listing and Register must both give ("" for a new registration).
	want := map[[2]string]string{
		{"new", "multi-agent-collaboration"}:                   "claim_required",
		{"claimed", "multi-agent-collaboration"}:               "prerequisites_not_met",
		{"new", "open-live"}:                                   "",
		{"new", "needs-cred"}:                                  "prerequisites_not_met",
		{"credential", "needs-cred"}:                           "",
		{"revoked-credential", "needs-cred"}:                   "prerequisites_not_met",
		{"attempts-used", "limited"}:                           "attempts_exhausted",
		{"over-the-limit", "limited"}:                          "attempts_exhausted",
		{"private-passed-poaw", "needs-poaw"}:                  "",
		{"passed-limited", "limited"}:                          "attempts_exhausted",
		{"failed-just-now", "cooldown"}:                        "retry_later",
		{"failed-long-ago", "cooldown"}:                        "",
		{"new", "needs-poaw"}:                                  "prerequisites_not_met",
		{"passed-poaw", "needs-poaw"}:                          "",
		{"unclaimed-passed-poaw", "needs-poaw"}:                "",
		{"new", "drafty"}:                                      "evaluation_not_active",
		{"new", "old"}:                                         "evaluation_not_active",
		{"open-registration", "identity-check"}:                "open",
		{"unclaimed-passed-poaw", "multi-agent-collaboration"}: "claim_required",
		{"passed-poaw", "ai-safety-benchmark"}:                 "",
		{"unclaimed-passed-poaw", "ai-safety-benchmark"}:       "claim_required",
		{"new", "mc-points"}:                                   "claim_required",
		{"claimed", "mc-points"}:                               "",
		{"new", "mc-opt-out"}:                                  "",
		{"new", "mc-practice"}:                                 "",
		{"new", "opt-in"}:                                      "claim_required",
		{"claimed", "opt-in"}:                                  "",
		{"new", "sealed-elsewhere"}:                            "evaluation_unavailable",
		{"passed-poaw", "sealed-elsewhere"}:                    "evaluation_unavailable",
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			svc := listingWorld(t, st, listingT0)
			entries, err := st.Entries(t.Context(), registry.EntryFilter{EvaluationOnly: true, IncludeRemoved: true})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[[2]string]bool{}
			for _, k := range agentKinds {
				t.Run(k.name, func(t *testing.T) {
					a, _, err := registry.NewAgent(k.name, "", listingT0)
					if err != nil {
						t.Fatal(err)
					}
					if err := st.CreateAgent(t.Context(), a); err != nil {
						t.Fatal(err)
					}
					k.make(t, st, svc, a.ID)
					els, err := svc.Eligibilities(t.Context(), a.ID, entries)
					if err != nil {
						t.Fatal(err)
					}
					for i, e := range entries {
						t.Run(e.ID, func(t *testing.T) {
							el := els[i]
							listed := "open"
							switch {
							case el.Open == nil && el.CanRegister:
								listed = ""
							case el.Open == nil && el.Refusal != nil:
								listed = el.Refusal.Code
							case el.Open == nil:
								t.Fatalf("listing: cannot register and no reason: %+v", el)
							}
							_, created, err := svc.Register(t.Context(), a.ID, e)
							got := ""
							var r *evaluation.Refusal
							switch {
							case errors.As(err, &r):
								got = r.Code
							case err != nil:
								t.Fatalf("register: %v", err)
							case !created:
								got = "open"
							}
							if got != listed {
								t.Errorf("register says %q, the listing %q (status %s)", got, listed, el.Status)
							}
							if w, ok := want[[2]string{k.name, e.ID}]; ok {
								seen[[2]string{k.name, e.ID}] = true
								if got != w {
									t.Errorf("register says %q, want %q", got, w)
								}
							}
							if listed == "prerequisites_not_met" && !el.HasPassed && el.Status != "prerequisites_not_met" {
								t.Errorf("status %q with prerequisites not met", el.Status)
							}
						})
					}
				})
			}
			for k := range want {
				if !seen[k] {
					t.Errorf("the table has no case %v", k)
				}
			}
		})
	}
}

// TestSealedAnswersMustOpen: a benchmark whose sealed answers this
// registry's key does not open takes no registrations, and says why
// (naming the question, never an answer), for anyone.
func TestSealedAnswersMustOpen(t *testing.T) {
	t.Parallel()
	st := stores["sqlite"](t)
	listingWorld(t, st, listingT0) // syncs the registry
	dev, err := seal.ParseKey(evaluations.DevelopmentSealingKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		key  evaluation.Opener
		want map[string]string // evaluation id → refusal code ("" takes registrations)
	}{
		{"development key", dev, map[string]string{"ai-safety-benchmark": "", "sealed-elsewhere": "evaluation_unavailable"}},
		{"other key", siptest.SealingKey(), map[string]string{"ai-safety-benchmark": "evaluation_unavailable", "sealed-elsewhere": ""}},
		{"no key", nil, map[string]string{"ai-safety-benchmark": "evaluation_unavailable", "sealed-elsewhere": "evaluation_unavailable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := evaluation.New(evaluation.Config{Versions: st, Agents: st, Attempts: st, Challenges: st, Results: st, Revocations: st, Presented: st, Jobs: st, Judging: st, Sessions: st, Messages: st, Proctoring: st, Seats: st,
				Now: func() time.Time { return listingT0 }, Key: tc.key})
			for id, want := range tc.want {
				e, err := st.Entry(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				for range 2 { // the second answer comes from what the first remembered
					got := ""
					r := svc.Unavailable(e)
					if r != nil {
						got = r.Code
					}
					if got != want {
						t.Fatalf("%s: refusal %q, want %q (%v)", id, got, want, r)
					}
					if r == nil {
						continue
					}
					if !errors.Is(r, registry.ErrConflict) {
						t.Errorf("%s: refusal of kind %v, want a conflict", id, r.Kind)
					}
					if tc.key != nil && !strings.Contains(r.Message, "question") {
						t.Errorf("%s: message %q does not name the question", id, r.Message)
					}
					if strings.Contains(r.Message, "Right") || r.Hint == "" {
						t.Errorf("%s: message %q, hint %q", id, r.Message, r.Hint)
					}
				}
			}
		})
	}
}
