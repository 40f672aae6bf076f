package registrytest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

var uncounted = []evaluation.Outcome{evaluation.OutcomeNotGraded, evaluation.OutcomeInfrastructureFailure}

// RunAttemptLimitTests runs the attempt-limit half of the conformance
// suite. open returns two handles on one database (two replicas; the
// same store twice where there is one process).
func RunAttemptLimitTests(t *testing.T, open func(t *testing.T) (FullStore, FullStore)) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, FullStore, FullStore)
	}{
		{"WhatCounts", testAttemptsCounted},
		{"PerOwner", testAttemptsPerOwner},
		{"RetryAfter", testRetryAfter},
		{"RegistrationsRacingASubmission", testLimitRace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b := open(t)
			tc.fn(t, a, b)
		})
	}
}

// attempt opens a registration within l and ends it with outcome o
// (open when o is ""); started says whether it started first.
func attempt(t *testing.T, s FullStore, agent *registry.Agent, e *registry.Entry, l evaluation.AttemptLimit, o evaluation.Outcome, at time.Time) (*evaluation.Registration, error) {
	t.Helper()
	ctx := t.Context()
	r := newRegistration(t, agent, e, 0)
	r.RegisteredAt = at
	reg, created, err := s.RegisterWithin(ctx, r, l)
	if err != nil {
		return nil, err
	}
	if !created {
		t.Fatalf("registration %s was open already", reg.ID)
	}
	if o == "" {
		return reg, nil
	}
	if _, err := s.MoveRegistration(ctx, reg.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered}, evaluation.RegInProgress, at); err != nil {
		t.Fatal(err)
	}
	res := result(reg, o == evaluation.OutcomePassed, at.Add(time.Minute))
	res.Outcome = o
	if _, err := s.RecordResult(ctx, res, 0); err != nil {
		t.Fatal(err)
	}
	return reg, nil
}

func testAttemptsCounted(t *testing.T, s, _ FullStore) {
	ctx := t.Context()
	agent, alpha := evalFixture(t, s)
	l := evaluation.AttemptLimit{Max: 3, Uncounted: uncounted}
	// Ended for the server's sake: not counted.
	for _, o := range uncounted {
		if _, err := attempt(t, s, agent, alpha, l, o, t0); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
	}
	// Given back before it started: not counted.
	r, _, err := s.RegisterWithin(ctx, newRegistration(t, agent, alpha, 1), l)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveRegistration(ctx, r.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered}, evaluation.RegCancelled, t0); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Attempts(ctx, agent.ID, alpha.ID, l); err != nil || n.Counted != 0 {
		t.Fatalf("after attempts that do not count: %+v, %v; want 0 counted", n, err)
	}
	// Expired and cancelled after the start count, as does the open one.
	for _, o := range []evaluation.Outcome{evaluation.OutcomeExpired, evaluation.OutcomeCancelled, ""} {
		if _, err := attempt(t, s, agent, alpha, l, o, t0); err != nil {
			t.Fatalf("%q: %v", o, err)
		}
	}
	if n, err := s.Attempts(ctx, agent.ID, alpha.ID, l); err != nil || n.Counted != 3 {
		t.Errorf("counted %+v, %v; want 3", n, err)
	}
	// The open one comes back whatever the limit.
	if reg, created, err := s.RegisterWithin(ctx, newRegistration(t, agent, alpha, 2), l); err != nil || created {
		t.Errorf("with one open: %+v, created %v, %v; want the open one", reg, created, err)
	}
	other, _ := mustAgent(t, s, fmt.Sprintf("other-%d", time.Now().UnixNano()%1e9))
	if _, err := attempt(t, s, other, alpha, l, evaluation.OutcomeFailed, t0); err != nil {
		t.Errorf("another agent's attempts are its own: %v", err)
	}
}

func testAttemptsPerOwner(t *testing.T, s, _ FullStore) {
	ctx := t.Context()
	first, alpha := evalFixture(t, s)
	owner := fmt.Sprintf("owner%d", time.Now().UnixNano()%1e9)
	claim := func(a *registry.Agent, c registry.Credentials) *registry.Agent {
		got, err := s.ClaimAgent(ctx, registry.HashSecret(c.ClaimToken), owner, t0)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// Attempts made before the claim count for the owner too.
	l := evaluation.AttemptLimit{Max: 2, Uncounted: uncounted}
	a1, c1 := mustAgent(t, s, "sibling-one")
	if _, err := attempt(t, s, a1, alpha, l, evaluation.OutcomeFailed, t0); err != nil {
		t.Fatal(err)
	}
	claim(a1, c1)
	a2, c2 := mustAgent(t, s, "sibling-two")
	a2 = claim(a2, c2)
	l.Owner = owner
	if _, err := attempt(t, s, a2, alpha, l, evaluation.OutcomeFailed, t0); err != nil {
		t.Fatal(err)
	}
	a3, c3 := mustAgent(t, s, "sibling-three")
	a3 = claim(a3, c3)
	var reached *evaluation.LimitReached
	if _, err := attempt(t, s, a3, alpha, l, "", t0); !errors.As(err, &reached) || reached.Count.Counted != 2 {
		t.Errorf("a third agent of the owner: %v; want the limit reached at 2", err)
	}
	// An unowned agent and another owner's are not counted with them.
	if _, err := attempt(t, s, first, alpha, evaluation.AttemptLimit{Max: 2, Uncounted: uncounted}, "", t0); err != nil {
		t.Errorf("an unclaimed agent: %v", err)
	}
}

func testRetryAfter(t *testing.T, s, _ FullStore) {
	ctx := t.Context()
	agent, alpha := evalFixture(t, s)
	l := evaluation.AttemptLimit{RetryAfter: time.Hour, Uncounted: uncounted}
	if _, err := attempt(t, s, agent, alpha, l, evaluation.OutcomeExpired, t0); err != nil {
		t.Fatal(err)
	}
	// The expired attempt ended at t0+1m: not before t0+1h1m.
	var reached *evaluation.LimitReached
	if _, err := attempt(t, s, agent, alpha, l, "", t0.Add(time.Hour)); !errors.As(err, &reached) || !reached.Count.LastFailed.Equal(t0.Add(time.Minute)) {
		t.Errorf("within the wait: %v; want the limit reached, last failed at %v", err, t0.Add(time.Minute))
	}
	// One that ended for the server's sake neither counts nor resets the wait.
	if n, err := s.Attempts(ctx, agent.ID, alpha.ID, l); err != nil || n.Counted != 1 {
		t.Errorf("counted %+v, %v", n, err)
	}
	if _, err := attempt(t, s, agent, alpha, l, evaluation.OutcomePassed, t0.Add(time.Hour+time.Minute)); err != nil {
		t.Errorf("after the wait: %v", err)
	}
	if _, err := attempt(t, s, agent, alpha, l, "", t0.Add(time.Hour+2*time.Minute)); err != nil {
		t.Errorf("after a pass there is no wait: %v", err)
	}
}

// testLimitRace: 30 registrations on two handles race the submission of
// the open attempt under a limit of two; none opens a third.
func testLimitRace(t *testing.T, a, b FullStore) {
	ctx := t.Context()
	for round := range 3 {
		agent, alpha := evalFixture(t, a)
		l := evaluation.AttemptLimit{Max: 2, Uncounted: uncounted}
		if _, err := attempt(t, a, agent, alpha, l, evaluation.OutcomeFailed, t0); err != nil {
			t.Fatal(err)
		}
		open, err := attempt(t, a, agent, alpha, l, "", t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.MoveRegistration(ctx, open.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered}, evaluation.RegInProgress, t0); err != nil {
			t.Fatal(err)
		}
		var created atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			if _, err := b.RecordResult(ctx, result(open, false, t0.Add(time.Minute)), 0); err != nil {
				t.Error(err)
			}
		})
		for i := range 30 {
			s := a
			if i%2 == 1 {
				s = b
			}
			wg.Go(func() {
				<-start
				_, ok, err := s.RegisterWithin(ctx, newRegistration(t, agent, alpha, 100+i), l)
				var reached *evaluation.LimitReached
				if err != nil && !errors.As(err, &reached) {
					t.Error(err)
				}
				if ok {
					created.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if n, err := a.Attempts(ctx, agent.ID, alpha.ID, evaluation.AttemptLimit{}); err != nil || n.Counted != 2 || created.Load() != 0 {
			t.Errorf("round %d: %d registrations (%v), %d opened by the racers; want 2 and none", round, n.Counted, err, created.Load())
		}
	}
}
