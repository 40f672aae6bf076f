package registrytest

import (
	"fmt"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/siptest"
)

// testStatisticsFacts: facts are an evaluation's results that still
// count, oldest first, with the registration's time; the mark changes
// with every result and revocation; totals count across the registry.
func testStatisticsFacts(t *testing.T, s FullStore) {
	ctx := t.Context()
	agents := s.(registry.AgentStore)
	mustSync(t, s, []registry.File{siptest.SIP(1, "alpha", "active"), siptest.SIP(2, "beta", "active")}, "c1", t0)
	alpha, _ := s.Entry(ctx, "alpha")
	beta, _ := s.Entry(ctx, "beta")
	ada, _ := mustAgent(t, agents, "fx-ada")
	bob, _ := mustAgent(t, agents, "fx-bob")
	mustAgent(t, agents, "fx-idle")

	attempt := func(a *registry.Agent, e *registry.Entry, i int, outcome evaluation.Outcome, score float64) *evaluation.Result {
		t.Helper()
		reg := newRegistration(t, a, e, i)
		reg.RegisteredAt = t0.Add(time.Duration(i) * time.Hour)
		r, _, err := s.Register(ctx, reg)
		if err != nil {
			t.Fatal(err)
		}
		res := result(r, outcome == evaluation.OutcomePassed, t0.Add(time.Duration(i)*time.Hour+10*time.Minute))
		res.Outcome = outcome
		if score >= 0 {
			max := 10.0
			res.Score, res.MaxScore = &score, &max
		}
		got, err := s.RecordResult(ctx, res, 0)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	before, err := s.Mark(ctx, alpha.ID)
	if err != nil || before.Results != 0 || before.Revoked != 0 {
		t.Fatalf("Mark of no results = %+v, %v", before, err)
	}
	attempt(ada, alpha, 1, evaluation.OutcomeFailed, 4)
	attempt(ada, alpha, 2, evaluation.OutcomePassed, 9)
	revoked := attempt(bob, alpha, 3, evaluation.OutcomePassed, 10)
	attempt(bob, beta, 4, evaluation.OutcomeExpired, -1)
	// an open registration: counted by totals, not a fact
	if _, _, err := s.Register(ctx, newRegistration(t, bob, alpha, 5)); err != nil {
		t.Fatal(err)
	}
	m1, _ := s.Mark(ctx, alpha.ID)
	if err := s.RevokeResult(ctx, revoked.ID, "copied", t0); err != nil {
		t.Fatal(err)
	}
	m2, err := s.Mark(ctx, alpha.ID)
	if err != nil || m1 != (struct{ Results, Revoked int }{3, 0}) || m2 != (struct{ Results, Revoked int }{3, 1}) {
		t.Errorf("marks %+v then %+v (%v); want 3/0 then 3/1", m1, m2, err)
	}

	facts, err := s.Facts(ctx, alpha.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range facts {
		got = append(got, fmt.Sprintf("%s %s %s %g/%g %v %s %s", map[string]string{ada.ID: "ada", bob.ID: "bob"}[f.AgentID], f.Version, f.Outcome, f.Score, f.MaxScore, f.Scored,
			f.RegisteredAt.Sub(t0), f.CompletedAt.Sub(t0)))
	}
	want := []string{"ada 1.0.0 failed 4/10 true 1h0m0s 1h10m0s", "ada 1.0.0 passed 9/10 true 2h0m0s 2h10m0s"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("facts\n got %q\nwant %q", got, want)
	}
	if bf, _ := s.Facts(ctx, beta.ID); len(bf) != 1 || bf[0].Scored || bf[0].Outcome != evaluation.OutcomeExpired {
		t.Errorf("beta's facts %+v; want one expired attempt without a score", bf)
	}

	tot, err := s.Totals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Agents != 3 || tot.AgentsRegistered != 2 {
		t.Errorf("agents %d, registered %d; want 3, 2", tot.Agents, tot.AgentsRegistered)
	}
	if r := tot.Registrations; r[evaluation.RegCompleted] != 4 || r[evaluation.RegRegistered] != 1 {
		t.Errorf("registrations %v; want 4 completed, 1 registered", r)
	}
	if o := tot.Outcomes; o[evaluation.OutcomePassed] != 1 || o[evaluation.OutcomeFailed] != 1 || o[evaluation.OutcomeExpired] != 1 {
		t.Errorf("outcomes %v; want 1 passed (the revoked one left out), 1 failed, 1 expired", o)
	}
	if at, ok := tot.FirstSynced["alpha"]; !ok || !at.Equal(t0) || len(tot.FirstSynced) != 2 {
		t.Errorf("first synced %v; want alpha and beta at %v", tot.FirstSynced, t0)
	}
}
