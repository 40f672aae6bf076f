package registrytest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/stats"
)

// FullStore is a store of SIPs, agents and results together, as the
// server uses it.
type FullStore interface {
	registry.Store
	registry.AgentStore
	evaluation.VersionStore
	evaluation.AttemptStore
	evaluation.ChallengeStore
	evaluation.ResultStore
	evaluation.RevocationStore
	evaluation.PresentedStore
	stats.Source
	// Register opens a registration without an attempt limit, or returns
	// the agent's open one for the evaluation (created false); concurrent
	// calls open one. The service registers through RegisterWithin; the
	// suite and fixtures register with this.
	Register(ctx context.Context, r *evaluation.Registration) (_ *evaluation.Registration, created bool, err error)
	// ResultsSince lists every result completed at or after since, oldest
	// first (what sip traces export reads).
	ResultsSince(ctx context.Context, since time.Time) ([]*evaluation.Result, error)
}

// RunEvaluationStoreTests runs the registrations-and-results half of the
// conformance suite.
func RunEvaluationStoreTests(t *testing.T, open func(t *testing.T) FullStore) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, FullStore)
	}{
		{"RegisterOnce", testRegisterOnce},
		{"MoveRegistration", testMoveRegistration},
		{"DeadlinesAndOverdue", testDeadlines},
		{"Challenges", testChallenges},
		{"StartChallengeOnce", testStartChallengeOnce},
		{"OneResultAndPointsOnce", testResultsAndPoints},
		{"VersionIsPinned", testVersionPinned},
		{"ResultPagesAndPrivacy", testResultPages},
		{"PassesCountedAndNamed", testPassCounts},
		{"RevokedResultsAndTheirIndexes", testRevocation},
		{"ExternalCredentialsNewestKept", testExternalCredentials},
		{"ExternalSubjectHeldByOneAgent", testExternalSubjectHeldOnce},
		{"StandingsByPointsPublicOnly", testStandings},
		{"StatisticsFacts", testStatisticsFacts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// evalFixture syncs two evaluations and creates an agent.
func evalFixture(t *testing.T, s FullStore) (agent *registry.Agent, alpha *registry.Entry) {
	t.Helper()
	mustSync(t, s, []registry.File{siptest.SIP(1, "alpha", "active"), siptest.SIP(2, "beta", "active")}, "c1", t0)
	agent, _ = mustAgent(t, s.(registry.AgentStore), fmt.Sprintf("agent-%d", time.Now().UnixNano()%1e9))
	alpha, err := s.Entry(t.Context(), "alpha")
	if err != nil {
		t.Fatal(err)
	}
	return agent, alpha
}

func newRegistration(t *testing.T, agent *registry.Agent, e *registry.Entry, i int) *evaluation.Registration {
	return &evaluation.Registration{ID: fmt.Sprintf("reg_%s_%d_%d", e.ID, i, time.Now().UnixNano()), AgentID: agent.ID,
		EvaluationID: e.ID, VersionID: e.Current.ID, RegisteredAt: t0}
}

func testRegisterOnce(t *testing.T, s FullStore) {
	agent, alpha := evalFixture(t, s)
	var created atomic.Int32
	ids := sync.Map{}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			r, ok, err := s.Register(t.Context(), newRegistration(t, agent, alpha, i))
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				created.Add(1)
			}
			ids.Store(r.ID, true)
		})
	}
	wg.Wait()
	n := 0
	ids.Range(func(any, any) bool { n++; return true })
	if created.Load() != 1 || n != 1 {
		t.Errorf("%d created, %d distinct registrations", created.Load(), n)
	}
	open, err := s.OpenRegistrations(t.Context(), agent.ID)
	if err != nil || len(open) != 1 || open[0].Status != evaluation.RegRegistered || open[0].Version != "1.0.0" {
		t.Errorf("open registrations %+v, %v", open, err)
	}
}

func testMoveRegistration(t *testing.T, s FullStore) {
	ctx := t.Context()
	agent, alpha := evalFixture(t, s)
	r, _, err := s.Register(ctx, newRegistration(t, agent, alpha, 0))
	if err != nil {
		t.Fatal(err)
	}
	moved, err := s.MoveRegistration(ctx, r.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered}, evaluation.RegInProgress, t0.Add(time.Second))
	if err != nil || moved.Status != evaluation.RegInProgress || !moved.StartedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("%+v, %v", moved, err)
	}
	if _, err := s.MoveRegistration(ctx, r.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered}, evaluation.RegInProgress, t0); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("move from a status it is not in: %v", err)
	}
	if _, err := s.MoveRegistration(ctx, "reg_none", []evaluation.RegistrationStatus{evaluation.RegRegistered}, evaluation.RegCancelled, t0); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("unknown registration: %v", err)
	}
	if _, err := s.MoveRegistration(ctx, r.ID, []evaluation.RegistrationStatus{evaluation.RegInProgress}, evaluation.RegCancelled, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenRegistration(ctx, agent.ID, alpha.ID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("cancelled registration still open: %v", err)
	}
	if _, created, err := s.Register(ctx, newRegistration(t, agent, alpha, 1)); err != nil || !created {
		t.Errorf("register again after cancelling: %v, %v", created, err)
	}
}

func testChallenges(t *testing.T, s FullStore) {
	ctx := t.Context()
	agent, alpha := evalFixture(t, s)
	r2, _, _ := s.Register(ctx, newRegistration(t, agent, alpha, 10))
	c2, err := evaluation.NewChallenge("", agent.ID, t0, time.Minute) // the store finds the registration
	if err != nil {
		t.Fatal(err)
	}
	if got, created, err := s.StartChallenge(ctx, alpha.ID, c2); err != nil || !created || got.ID != c2.ID || got.Nonce != c2.Nonce || got.RegistrationID != r2.ID {
		t.Fatalf("StartChallenge = %+v, %v, %v; want the new challenge, created", got, created, err)
	}
	got, err := s.Challenge(ctx, c2.ID)
	if err != nil || got.Nonce != c2.Nonce || len(got.Values) != 30 || got.Values[7] != c2.Values[7] || !got.ExpiresAt.Equal(c2.ExpiresAt) || got.RegistrationID != r2.ID {
		t.Fatalf("Challenge = %+v, %v", got, err)
	}
	if _, err := s.Challenge(ctx, "ch_none"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("an unknown challenge: %v, want ErrNotFound", err)
	}
	if open, _ := s.OpenRegistration(ctx, agent.ID, alpha.ID); open.Status != evaluation.RegInProgress || !open.StartedAt.Equal(t0) {
		t.Errorf("StartChallenge did not start the registration: %+v", open)
	}
	// What answering reads: the open registration with the challenge.
	if reg, ch, err := s.OpenRegistrationChallenge(ctx, agent.ID, alpha.ID, c2.ID); err != nil || reg.ID != r2.ID || reg.Status != evaluation.RegInProgress ||
		ch == nil || ch.ID != c2.ID || ch.Nonce != c2.Nonce || len(ch.Values) != 30 || ch.Values[3] != c2.Values[3] ||
		!ch.ExpiresAt.Equal(c2.ExpiresAt) || !ch.CreatedAt.Equal(c2.CreatedAt) || !ch.UsedAt.IsZero() || ch.AgentID != agent.ID || ch.RegistrationID != r2.ID {
		t.Errorf("OpenRegistrationChallenge = %+v, %+v, %v", reg, ch, err)
	}
	if reg, ch, err := s.OpenRegistrationChallenge(ctx, agent.ID, alpha.ID, "ch_none"); err != nil || reg.ID != r2.ID || ch != nil {
		t.Errorf("OpenRegistrationChallenge of an unknown challenge = %+v, %+v, %v; want the registration and no challenge", reg, ch, err)
	}
	if _, _, err := s.OpenRegistrationChallenge(ctx, "agent_none", alpha.ID, c2.ID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("OpenRegistrationChallenge without a registration: %v, want ErrNotFound", err)
	}
	// Starting again returns the open challenge, whole, and stores nothing.
	c3, _ := evaluation.NewChallenge(r2.ID, agent.ID, t0.Add(time.Second), time.Minute)
	got, created, err := s.StartChallenge(ctx, alpha.ID, c3)
	if err != nil || created || got.ID != c2.ID || got.Nonce != c2.Nonce || len(got.Values) != 30 || !got.ExpiresAt.Equal(c2.ExpiresAt) {
		t.Errorf("StartChallenge again = %+v, %v, %v; want the open challenge %s", got, created, err, c2.ID)
	}
	if _, err := s.Challenge(ctx, c3.ID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("a second challenge was stored: %v", err)
	}
	// Once it expired unanswered the attempt is past its deadline: it
	// takes no new challenge (the sweeper ends it as expired).
	c4, _ := evaluation.NewChallenge(r2.ID, agent.ID, t0.Add(2*time.Minute), time.Minute)
	if got, _, err := s.StartChallenge(ctx, alpha.ID, c4); !errors.Is(err, registry.ErrGone) {
		t.Errorf("StartChallenge after expiry = %+v, %v; want ErrGone", got, err)
	}
	if _, err := s.Challenge(ctx, c4.ID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("a challenge was stored after the deadline: %v", err)
	}
	if open, _ := s.OpenRegistration(ctx, agent.ID, alpha.ID); open.Status != evaluation.RegInProgress || !open.StartedAt.Equal(t0) || !open.Deadline.Equal(c2.ExpiresAt) {
		t.Errorf("the overdue registration changed: %+v", open)
	}
	stranger, _ := evaluation.NewChallenge("", "agent_none", t0, time.Minute)
	if _, _, err := s.StartChallenge(ctx, alpha.ID, stranger); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("StartChallenge without a registration: %v, want ErrNotFound", err)
	}
	// Ten answers at once: one is recorded, the others find it used.
	var answered, gone atomic.Int32
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			res := result(r2, true, t0.Add(time.Second))
			res.ID = fmt.Sprintf("res_%s_%d", r2.ID, i)
			switch _, err := s.AnswerChallenge(ctx, c2.ID, res, 3); {
			case err == nil:
				answered.Add(1)
			case errors.Is(err, registry.ErrGone):
				gone.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if answered.Load() != 1 || gone.Load() != 9 {
		t.Errorf("ten answers at once: %d recorded, %d gone; want 1 and 9", answered.Load(), gone.Load())
	}
	if got, _ := s.Challenge(ctx, c2.ID); got.UsedAt.IsZero() {
		t.Error("the answered challenge is not marked used")
	}
	// A registration waiting for a grade cannot be started.
	r3, _, _ := s.Register(ctx, newRegistration(t, agent, alpha, 11))
	if _, err := s.MoveRegistration(ctx, r3.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered}, evaluation.RegAwaitingGrading, t0); err != nil {
		t.Fatal(err)
	}
	c5, _ := evaluation.NewChallenge("", agent.ID, t0, time.Minute)
	if _, _, err := s.StartChallenge(ctx, alpha.ID, c5); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("StartChallenge of a registration awaiting a grade: %v, want ErrConflict", err)
	}
}

// testStartChallengeOnce: 20 starts of one registration at once make one
// challenge, which all 20 return.
func testStartChallengeOnce(t *testing.T, s FullStore) {
	agent, alpha := evalFixture(t, s)
	r, _, err := s.Register(t.Context(), newRegistration(t, agent, alpha, 1))
	if err != nil {
		t.Fatal(err)
	}
	var created atomic.Int32
	ids := sync.Map{}
	var wg, warm sync.WaitGroup
	gate := make(chan struct{})
	for range 20 {
		warm.Add(1)
		wg.Go(func() {
			s.OpenRegistration(t.Context(), agent.ID, alpha.ID) // a connection each, before the race
			warm.Done()
			<-gate
			c, _ := evaluation.NewChallenge("", agent.ID, t0, time.Minute)
			got, made, err := s.StartChallenge(t.Context(), alpha.ID, c)
			if err != nil {
				t.Error(err)
				return
			}
			if made {
				created.Add(1)
			}
			ids.Store(got.ID, got.RegistrationID)
		})
	}
	warm.Wait()
	close(gate)
	wg.Wait()
	n := 0
	ids.Range(func(_, reg any) bool {
		n++
		if reg != r.ID {
			t.Errorf("a challenge of registration %v, want %s", reg, r.ID)
		}
		return true
	})
	if created.Load() != 1 || n != 1 {
		t.Errorf("20 starts at once: %d created, %d distinct challenges; want 1 and 1", created.Load(), n)
	}
}

func result(r *evaluation.Registration, passed bool, at time.Time) *evaluation.Result {
	return &evaluation.Result{ID: "res_" + r.ID, RegistrationID: r.ID, AgentID: r.AgentID, EvaluationID: r.EvaluationID,
		VersionID: r.VersionID, Version: r.Version, ContentSHA256: "x", Passed: passed, CompletedAt: at,
		Trace: evaluation.Trace{Status: "success", Gates: []evaluation.Gate{{Gate: 4, Name: "goal", Passed: passed}}}}
}

func testResultsAndPoints(t *testing.T, s FullStore) {
	ctx := t.Context()
	agent, alpha := evalFixture(t, s)
	r, _, _ := s.Register(ctx, newRegistration(t, agent, alpha, 0))
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			res := result(r, true, t0.Add(time.Minute))
			res.ID = fmt.Sprintf("res_%d", i)
			switch _, err := s.RecordResult(ctx, res, 5); {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, registry.ErrConflict):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d results for one registration", wins.Load())
	}
	if reg, err := s.OpenRegistration(ctx, agent.ID, alpha.ID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("registration still open: %+v", reg)
	}
	r2, _, _ := s.Register(ctx, newRegistration(t, agent, alpha, 1))
	second, err := s.RecordResult(ctx, result(r2, true, t0.Add(2*time.Minute)), 5)
	if err != nil || second.PointsEarned != 0 {
		t.Errorf("second pass credited %v points (%v)", second, err)
	}
	if p, err := s.AgentPoints(ctx, agent.ID); err != nil || p != 5 {
		t.Errorf("points %v, %v", p, err)
	}
	passes, err := s.Passes(ctx, agent.ID, t0.Add(time.Hour))
	if err != nil || len(passes) != 1 || passes[0].ID != second.ID {
		t.Errorf("passes %+v, %v", passes, err)
	}
	r3, _, _ := s.Register(ctx, newRegistration(t, agent, alpha, 2))
	short := result(r3, true, t0.Add(3*time.Minute))
	short.ExpiresAt = t0.Add(4 * time.Minute)
	if _, err := s.RecordResult(ctx, short, 5); err != nil {
		t.Fatal(err)
	}
	if passes, _ := s.Passes(ctx, agent.ID, t0.Add(3*time.Minute+time.Second)); len(passes) != 1 || passes[0].ID != short.ID {
		t.Errorf("newest valid pass: %+v", passes)
	}
	if passes, _ := s.Passes(ctx, agent.ID, t0.Add(5*time.Minute)); len(passes) != 1 || passes[0].ID != second.ID {
		t.Errorf("after the newest expired, the older pass counts: %+v", passes)
	}
	got, err := s.Result(ctx, second.ID)
	if err != nil || got.Trace.Gates[0].Name != "goal" || got.RegistrationID != r2.ID {
		t.Errorf("result %+v, %v", got, err)
	}
}

func testVersionPinned(t *testing.T, s FullStore) {
	ctx := t.Context()
	agent, alpha := evalFixture(t, s)
	if _, _, err := s.Register(ctx, newRegistration(t, agent, alpha, 0)); err != nil {
		t.Fatal(err)
	}
	files := []registry.File{siptest.Edit(siptest.SIP(1, "alpha", "active"), "2.0.0", "2026-05-01", "Harder now."), siptest.SIP(2, "beta", "active")}
	mustSync(t, s, files, "c2", t0.Add(time.Hour))
	open, err := s.OpenRegistration(ctx, agent.ID, alpha.ID)
	if err != nil || open.Version != "1.0.0" || open.VersionID != alpha.Current.ID {
		t.Fatalf("registration follows the new version: %+v, %v", open, err)
	}
	res, err := s.RecordResult(ctx, result(open, true, t0.Add(2*time.Hour)), 1)
	if err != nil || res.Version != "1.0.0" || res.VersionID != alpha.Current.ID {
		t.Errorf("result %+v, %v", res, err)
	}
}

func testResultPages(t *testing.T, s FullStore) {
	ctx := t.Context()
	agent, alpha := evalFixture(t, s)
	var want []string // newest first, as Results lists them
	for i := range 5 {
		r, _, _ := s.Register(ctx, newRegistration(t, agent, alpha, i))
		res, err := s.RecordResult(ctx, result(r, i%2 == 0, t0.Add(time.Duration(i)*time.Second)), 1)
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{res.ID}, want...)
	}
	var seen []string
	cursor := ""
	for page := 0; page < 5; page++ {
		got, next, err := s.Results(ctx, evaluation.ResultFilter{EvaluationID: alpha.ID, Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			seen = append(seen, r.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if !slices.Equal(seen, want) {
		t.Errorf("paged through %v; want every result once, newest first: %v", seen, want)
	}
	if _, _, err := s.Results(ctx, evaluation.ResultFilter{Cursor: "garbage!"}); !errors.Is(err, registry.ErrInvalid) {
		t.Errorf("bad cursor: %v", err)
	}
	private := false
	if _, err := s.UpdateAgent(ctx, agent.ID, registry.AgentUpdate{ResultsPublic: &private}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Results(ctx, evaluation.ResultFilter{EvaluationID: alpha.ID}); len(got) != 0 {
		t.Errorf("private results shown to others: %d", len(got))
	}
	if got, _, _ := s.Results(ctx, evaluation.ResultFilter{EvaluationID: alpha.ID, Viewer: agent.ID}); len(got) != 5 {
		t.Errorf("private results hidden from their agent: %d", len(got))
	}
}

func testPassCounts(t *testing.T, s FullStore) {
	ctx := t.Context()
	agent, alpha := evalFixture(t, s)
	other, _ := mustAgent(t, s.(registry.AgentStore), fmt.Sprintf("other-%d", time.Now().UnixNano()%1e9))
	// agent fails then passes alpha twice; other passes alpha once.
	for i, passed := range []bool{false, true, true} {
		r, _, _ := s.Register(ctx, newRegistration(t, agent, alpha, i))
		if _, err := s.RecordResult(ctx, result(r, passed, t0.Add(time.Duration(i)*time.Second)), 1); err != nil {
			t.Fatal(err)
		}
	}
	r, _, _ := s.Register(ctx, newRegistration(t, other, alpha, 9))
	if _, err := s.RecordResult(ctx, result(r, true, t0.Add(time.Minute)), 1); err != nil {
		t.Fatal(err)
	}
	counts, err := s.PassCounts(ctx)
	if err != nil || counts[alpha.ID] != 2 || counts["beta"] != 0 {
		t.Errorf("pass counts = %v, %v; want alpha: 2 (distinct agents)", counts, err)
	}
	passes, _, err := s.Results(ctx, evaluation.ResultFilter{PassedOnly: true, Limit: 10})
	if err != nil || len(passes) != 3 {
		t.Fatalf("passes = %d, %v; want 3", len(passes), err)
	}
	for _, p := range passes {
		if !p.Passed {
			t.Errorf("PassedOnly listed a failure: %+v", p)
		}
	}
	names, err := s.AgentNames(ctx, []string{agent.ID, other.ID, "nobody"})
	if err != nil || len(names) != 2 || names[agent.ID] != agent.Name || names[other.ID] != other.Name {
		t.Errorf("names = %v, %v", names, err)
	}
	if names, err := s.AgentNames(ctx, nil); err != nil || len(names) != 0 {
		t.Errorf("no ids: %v, %v", names, err)
	}
}

func testDeadlines(t *testing.T, s FullStore) {
	ctx := t.Context()
	agent, alpha := evalFixture(t, s)
	r, _, err := s.Register(ctx, newRegistration(t, agent, alpha, 0))
	if err != nil {
		t.Fatal(err)
	}
	started, err := s.StartAttempt(ctx, r.ID, t0, t0.Add(10*time.Minute))
	if err != nil || started.Status != evaluation.RegInProgress || !started.StartedAt.Equal(t0) || !started.Deadline.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("StartAttempt = %+v, %v", started, err)
	}
	// Starting again moves neither the start nor the deadline.
	again, err := s.StartAttempt(ctx, r.ID, t0.Add(5*time.Minute), t0.Add(15*time.Minute))
	if err != nil || !again.StartedAt.Equal(t0) || !again.Deadline.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("StartAttempt again = %+v, %v; want the first start and deadline", again, err)
	}
	other, _ := mustAgent(t, s, fmt.Sprintf("deadline-%d", time.Now().UnixNano()%1e9))
	r2, _, _ := s.Register(ctx, newRegistration(t, other, alpha, 1))
	if _, err := s.StartAttempt(ctx, r2.ID, t0, time.Time{}); err != nil { // no deadline
		t.Fatal(err)
	}
	for _, tt := range []struct {
		now  time.Time
		want int
	}{{t0.Add(10*time.Minute - time.Second), 0}, {t0.Add(10 * time.Minute), 1}, {t0.Add(1000 * time.Hour), 1}} {
		got, err := s.OverdueRegistrations(ctx, tt.now, 10)
		if err != nil || len(got) != tt.want || tt.want == 1 && got[0].ID != r.ID {
			t.Errorf("OverdueRegistrations(%s) = %d, %v; want %d", tt.now.Sub(t0), len(got), err, tt.want)
		}
	}
	if !started.Overdue(t0.Add(10*time.Minute)) || started.Overdue(t0) {
		t.Error("Overdue disagrees with the deadline")
	}
	if _, err := s.RecordResult(ctx, result(started, false, t0.Add(11*time.Minute)), 0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.OverdueRegistrations(ctx, t0.Add(time.Hour), 10); len(got) != 0 {
		t.Errorf("an attempt that ended is still overdue: %+v", got)
	}
	if _, err := s.StartAttempt(ctx, r.ID, t0, time.Time{}); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("starting an ended attempt: %v, want ErrConflict", err)
	}
	if _, err := s.StartAttempt(ctx, "reg_none", t0, time.Time{}); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("starting an unknown attempt: %v, want ErrNotFound", err)
	}
}

// testRevocation: each result's credential gets one index, distinct and
// stable, even when asked for at once; a revoked result keeps its first
// reason, stops counting as a pass and for points, and its index is
// listed as revoked.
func testRevocation(t *testing.T, s FullStore) {
	ctx := t.Context()
	agent, alpha := evalFixture(t, s)
	var ids []string
	for i := range 3 {
		r, _, _ := s.Register(ctx, newRegistration(t, agent, alpha, 10+i))
		res, err := s.RecordResult(ctx, result(r, true, t0.Add(time.Duration(i+1)*time.Minute)), 5)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	const rounds = 4
	got := make([][]int64, rounds) // each goroutine writes its own slot
	var wg sync.WaitGroup
	for round := range rounds {
		got[round] = make([]int64, len(ids))
		for i, id := range ids {
			wg.Go(func() {
				n, err := s.CredentialIndex(ctx, id)
				if err != nil {
					t.Error(err)
				}
				got[round][i] = n
			})
		}
	}
	wg.Wait()
	indexes := got[0]
	for i, id := range ids {
		for round := range rounds {
			if got[round][i] != indexes[i] {
				t.Errorf("concurrent calls gave %s two indexes: %d and %d", id, indexes[i], got[round][i])
			}
		}
		if n, err := s.CredentialIndex(ctx, id); err != nil || n != indexes[i] {
			t.Errorf("index of %s moved: %d then %d (%v)", id, indexes[i], n, err)
		}
	}
	if indexes[0] == indexes[1] || indexes[1] == indexes[2] || indexes[0] == indexes[2] {
		t.Errorf("indexes are not distinct: %v", indexes)
	}
	if _, err := s.CredentialIndex(ctx, "res_nope"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("index of no result: %v", err)
	}
	newest := ids[2]
	if err := s.RevokeResult(ctx, newest, "the proctor colluded", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeResult(ctx, newest, "again", t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	rev, err := s.Result(ctx, newest)
	if err != nil || rev.RevokedReason != "the proctor colluded" || !rev.RevokedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("revoked result %+v, %v", rev, err)
	}
	if err := s.RevokeResult(ctx, "res_nope", "x", t0); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("revoking no result: %v", err)
	}
	revoked, err := s.RevokedIndexes(ctx, 0, 1<<40)
	if err != nil || len(revoked) != 1 || revoked[0] != indexes[2] {
		t.Errorf("revoked indexes %v, %v; want [%d]", revoked, err, indexes[2])
	}
	passes, err := s.Passes(ctx, agent.ID, t0.Add(time.Hour))
	if err != nil || len(passes) != 1 || passes[0].ID == newest {
		t.Errorf("a revoked pass still counts: %+v, %v", passes, err)
	}
	if p, err := s.AgentPoints(ctx, agent.ID); err != nil || p != 5 {
		t.Errorf("points %v, %v", p, err)
	}
}

// testExternalCredentials: one credential per agent, issuer and
// achievement, the newest kept, read back as stored.
func testExternalCredentials(t *testing.T, s FullStore) {
	ctx := t.Context()
	agent, _ := evalFixture(t, s)
	c := &evaluation.ExternalCredential{AgentID: agent.ID, Issuer: "did:web:a.example", Achievement: "https://a.example/evaluations/poaw",
		Subject: "https://a.example/agents/ada", Credential: []byte(`{"id":"one"}`), ValidUntil: t0.Add(time.Hour), RecordedAt: t0}
	if err := s.PutExternalCredential(ctx, c); err != nil {
		t.Fatal(err)
	}
	newer := *c
	newer.Credential, newer.ValidUntil, newer.RecordedAt = []byte(`{"id":"two"}`), time.Time{}, t0.Add(time.Minute)
	if err := s.PutExternalCredential(ctx, &newer); err != nil {
		t.Fatal(err)
	}
	other := *c
	other.Achievement = "https://a.example/evaluations/identity"
	if err := s.PutExternalCredential(ctx, &other); err != nil {
		t.Fatal(err)
	}
	got, err := s.ExternalCredentials(ctx, agent.ID)
	if err != nil || len(got) != 2 {
		t.Fatalf("external credentials %+v, %v", got, err)
	}
	if !strings.Contains(string(got[1].Credential), "two") || !got[1].ValidUntil.IsZero() || !got[1].RecordedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("the newest was not kept: %+v", got[1])
	}
	if !got[0].ValidUntil.Equal(t0.Add(time.Hour)) || got[0].Subject != c.Subject {
		t.Errorf("read back %+v", got[0])
	}
}

// testStandings: public agents by points (revoked results left out), then
// passes, then name; a private agent is not listed; paging by offset.
func testStandings(t *testing.T, s FullStore) {
	ctx := t.Context()
	agents := s.(registry.AgentStore)
	mustSync(t, s, []registry.File{siptest.SIP(1, "alpha", "active"), siptest.SIP(2, "beta", "active")}, "c1", t0)
	alpha, _ := s.Entry(ctx, "alpha")
	beta, _ := s.Entry(ctx, "beta")
	pass := func(a *registry.Agent, e *registry.Entry, points float64, i int) *evaluation.Result {
		r, _, err := s.Register(ctx, newRegistration(t, a, e, i))
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.RecordResult(ctx, result(r, true, t0.Add(time.Duration(i)*time.Minute)), points)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ada, _ := mustAgent(t, agents, "st-ada")
	bob, _ := mustAgent(t, agents, "st-bob")
	cy, _ := mustAgent(t, agents, "st-cy")
	hidden, _ := mustAgent(t, agents, "st-hidden")
	pass(ada, alpha, 5, 1)
	pass(bob, alpha, 5, 2)
	pass(bob, beta, 7, 3)
	revoked := pass(cy, beta, 50, 4)
	if err := s.RevokeResult(ctx, revoked.ID, "colluded", t0); err != nil {
		t.Fatal(err)
	}
	pass(hidden, beta, 100, 5)
	private := false
	if _, err := agents.UpdateAgent(ctx, hidden.ID, registry.AgentUpdate{ResultsPublic: &private}); err != nil {
		t.Fatal(err)
	}
	all, total, err := s.Standings(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range all {
		if strings.HasPrefix(st.Name, "st-") {
			got = append(got, fmt.Sprintf("%s:%g:%d", st.Name, st.Points, st.Passes))
		}
	}
	if want := "st-bob:12:2 st-ada:5:1 st-cy:0:0"; strings.Join(got, " ") != want {
		t.Errorf("standings %v, want %s", got, want)
	}
	if total < 3 {
		t.Errorf("total %d", total)
	}
	page, _, err := s.Standings(ctx, 1, 1)
	if err != nil || len(page) != 1 || page[0].Name != all[1].Name {
		t.Errorf("the second page of one: %+v, %v", page, err)
	}
}

// testExternalSubjectHeldOnce: the subject of another registry's
// credential is held by the first agent that records one of its
// credentials; another agent's credential of that subject, of any
// achievement, is ErrConflict, and of agents racing for one subject
// exactly one gets it.
func testExternalSubjectHeldOnce(t *testing.T, s FullStore) {
	ctx := t.Context()
	ada, _ := evalFixture(t, s)
	agents := s.(registry.AgentStore)
	cred := func(agentID, achievement string) *evaluation.ExternalCredential {
		return &evaluation.ExternalCredential{AgentID: agentID, Issuer: "did:web:a.example", Achievement: "https://a.example/evaluations/" + achievement,
			Subject: "https://a.example/agents/ada", Credential: []byte(`{}`), RecordedAt: t0}
	}
	if err := s.PutExternalCredential(ctx, cred(ada.ID, "poaw")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutExternalCredential(ctx, cred(ada.ID, "identity")); err != nil {
		t.Errorf("the holder's second credential of its subject: %v", err)
	}
	eve, _ := mustAgent(t, agents, fmt.Sprintf("eve-%d", time.Now().UnixNano()%1e9))
	for _, achievement := range []string{"poaw", "identity", "other"} {
		if err := s.PutExternalCredential(ctx, cred(eve.ID, achievement)); !errors.Is(err, registry.ErrConflict) {
			t.Errorf("another agent's credential of a held subject (%s): %v, want ErrConflict", achievement, err)
		}
	}
	if got, err := s.ExternalCredentials(ctx, eve.ID); err != nil || len(got) != 0 {
		t.Errorf("the refused agent holds %d credentials, %v", len(got), err)
	}
	// Agents racing for a fresh subject: one holds it.
	const racers = 8
	ids := make([]string, racers)
	for i := range ids {
		a, _ := mustAgent(t, agents, fmt.Sprintf("racer-%d-%d", i, time.Now().UnixNano()%1e9))
		ids[i] = a.ID
	}
	errs := make(chan error, racers)
	for _, id := range ids {
		go func() {
			c := cred(id, "poaw")
			c.Subject = "https://a.example/agents/contested"
			errs <- s.PutExternalCredential(ctx, c)
		}()
	}
	won := 0
	for range racers {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, registry.ErrConflict):
			t.Errorf("a racer: %v, want nil or ErrConflict", err)
		}
	}
	if won != 1 {
		t.Errorf("%d agents hold one subject, want 1", won)
	}
}
