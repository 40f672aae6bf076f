package registrytest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// SessionFullStore is a store with multi-agent sessions.
type SessionFullStore interface {
	FullStore
	evaluation.SessionStore
	evaluation.MessageStore
	evaluation.ProctorStore
	evaluation.SeatStore
}

// RunSessionStoreTests runs the multi-agent half of the conformance
// suite.
func RunSessionStoreTests(t *testing.T, open func(t *testing.T) SessionFullStore) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, SessionFullStore)
	}{
		{"OneClaimWins", testOneClaimWins},
		{"SequencesWithoutGapsOrDuplicates", testSequences},
		{"ClosedSessionsRefuseMessages", testClosedSessions},
		{"LiveSeatsFirstComeFirstServed", testLiveSeats},
		{"GradeOnceByTheProctor", testGradeSession},
		{"OverdueSessionsEndOnce", testEndSession},
		{"LiveSeatsOneVersion", testLiveSeatsOneVersion},
		{"PendingAndSubscribe", testPendingAndSubscribe},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// sessionWorld syncs a proctored and a live evaluation and makes n agents.
func sessionWorld(t *testing.T, s SessionFullStore, n int) (agents []*registry.Agent, proctored, live *registry.Entry) {
	t.Helper()
	mustSync(t, s, []registry.File{siptestSIP(1, "proctored-eval"), siptestSIP(2, "live-eval")}, "c1", t0)
	for i := range n {
		a, _ := mustAgent(t, s, fmt.Sprintf("s-agent-%d-%d", i, time.Now().UnixNano()%1e9))
		agents = append(agents, a)
	}
	proctored, _ = s.Entry(t.Context(), "proctored-eval")
	live, _ = s.Entry(t.Context(), "live-eval")
	return agents, proctored, live
}

func siptestSIP(n int, id string) registry.File {
	return registry.File{Path: fmt.Sprintf("evaluations/SIP-%d.md", n), Content: fmt.Appendf(nil, `---
sip: %d
id: %s
name: "Eval %s"
module: core
type: simple_pass_fail
status: active
author: Ada
created_at: 2026-01-01
updated_at: 2026-01-01
version: "1.0.0"
points: 5
executable:
  handler: identity_check_handler
---

# Eval %s

Body.
`, n, id, id, id)}
}

func startedRegistration(t *testing.T, s SessionFullStore, a *registry.Agent, e *registry.Entry) *evaluation.Registration {
	t.Helper()
	reg, _, err := s.Register(t.Context(), newRegistration(t, a, e, 0))
	if err != nil {
		t.Fatal(err)
	}
	reg, err = s.MoveRegistration(t.Context(), reg.ID, []evaluation.RegistrationStatus{evaluation.RegRegistered}, evaluation.RegInProgress, t0)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func proctoredSession(t *testing.T, s SessionFullStore, proctor, candidate *registry.Agent, reg *evaluation.Registration) *evaluation.Session {
	t.Helper()
	sess, err := s.ClaimRegistration(t.Context(), &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: reg.EvaluationID,
		RegistrationID: reg.ID, CreatedAt: t0}, proctor.ID, candidate.ID)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

func testOneClaimWins(t *testing.T, s SessionFullStore) {
	agents, proctored, _ := sessionWorld(t, s, 21)
	reg := startedRegistration(t, s, agents[0], proctored)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	for _, p := range agents[1:] {
		wg.Go(func() {
			_, err := s.ClaimRegistration(t.Context(), &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: proctored.ID,
				RegistrationID: reg.ID, CreatedAt: t0}, p.ID, agents[0].ID)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, registry.ErrConflict):
				lost++
			default:
				t.Errorf("claim: %v", err)
			}
		})
	}
	wg.Wait()
	if won != 1 || lost != 19 {
		t.Errorf("%d claims won, %d lost; want 1 and 19", won, lost)
	}
	sess, err := s.SessionByRegistration(t.Context(), reg.ID)
	if err != nil || sess.Kind != evaluation.SessionProctored || sess.Status != evaluation.SessionActive || sess.ProctorID == "" {
		t.Fatalf("session = %+v, %v", sess, err)
	}
	ps, err := s.Participants(t.Context(), sess.ID)
	if err != nil || len(ps) != 2 {
		t.Fatalf("participants = %+v, %v", ps, err)
	}
	roles := map[string]string{}
	for _, p := range ps {
		roles[p.AgentID] = p.Role
	}
	if roles[agents[0].ID] != evaluation.RoleCandidate || roles[sess.ProctorID] != evaluation.RoleProctor {
		t.Errorf("roles = %v", roles)
	}
}

func testSequences(t *testing.T, s SessionFullStore) {
	agents, proctored, _ := sessionWorld(t, s, 2)
	sess := proctoredSession(t, s, agents[1], agents[0], startedRegistration(t, s, agents[0], proctored))
	const writers, each = 10, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				_, err := s.PostMessage(t.Context(), &evaluation.SessionMessage{ID: registry.NewID("msg_"), SessionID: sess.ID,
					SenderID: agents[w%2].ID, Role: evaluation.RoleCandidate, Content: fmt.Sprintf("w%d m%d", w, i), CreatedAt: t0})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var all []*evaluation.SessionMessage
	for since := int64(0); ; {
		page, err := s.Messages(t.Context(), sess.ID, since, 120)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
		since = page[len(page)-1].Sequence
	}
	if len(all) != writers*each {
		t.Fatalf("%d messages, want %d", len(all), writers*each)
	}
	for i, m := range all {
		if m.Sequence != int64(i+1) {
			t.Fatalf("message %d has sequence %d", i, m.Sequence)
		}
	}
	got, err := s.Session(t.Context(), sess.ID)
	if err != nil || got.LastSequence != writers*each {
		t.Errorf("last sequence = %+v, %v", got, err)
	}
}

func testClosedSessions(t *testing.T, s SessionFullStore) {
	agents, _, live := sessionWorld(t, s, 2)
	tmpl := &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: live.ID, MinParticipants: 1, MaxParticipants: 2}
	sess, err := s.JoinLive(t.Context(), tmpl, startedRegistration(t, s, agents[0], live), time.Hour, t0)
	if err != nil || sess.Status != evaluation.SessionActive || !sess.EndsAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("join = %+v, %v", sess, err)
	}
	post := func(at time.Time) error {
		_, err := s.PostMessage(t.Context(), &evaluation.SessionMessage{ID: registry.NewID("msg_"), SessionID: sess.ID, SenderID: agents[0].ID,
			Role: evaluation.RoleParticipant, Content: "hello", CreatedAt: at})
		return err
	}
	if err := post(t0.Add(59 * time.Minute)); err != nil {
		t.Errorf("before ends_at: %v", err)
	}
	if err := post(t0.Add(61 * time.Minute)); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("after ends_at: %v, want ErrConflict", err)
	}
	if _, err := s.PostMessage(t.Context(), &evaluation.SessionMessage{ID: registry.NewID("msg_"), SessionID: "nope", SenderID: agents[0].ID,
		Role: evaluation.RoleParticipant, Content: "x", CreatedAt: t0}); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("unknown session: %v", err)
	}
}

func testLiveSeats(t *testing.T, s SessionFullStore) {
	agents, _, live := sessionWorld(t, s, 6)
	var wg sync.WaitGroup
	regs := make([]*evaluation.Registration, 5)
	for i := range 5 {
		regs[i] = startedRegistration(t, s, agents[i], live)
	}
	for i := range 5 {
		wg.Go(func() {
			tmpl := &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: live.ID, MinParticipants: 4, MaxParticipants: 4}
			if _, err := s.JoinLive(t.Context(), tmpl, regs[i], time.Hour, t0); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	sizes := map[evaluation.SessionStatus][]int{}
	seen := map[string]bool{}
	for _, r := range regs {
		sess, err := s.SessionByRegistration(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !seen[sess.ID] {
			seen[sess.ID] = true
			sizes[sess.Status] = append(sizes[sess.Status], sess.Participants)
		}
	}
	if !slices.Equal(sizes[evaluation.SessionActive], []int{4}) || !slices.Equal(sizes[evaluation.SessionForming], []int{1}) {
		t.Fatalf("sessions by status and size = %v; want one active of 4 and one forming of 1", sizes)
	}
	// Joining again returns the seat taken; leaving works only while forming.
	for _, r := range regs {
		sess, _ := s.SessionByRegistration(t.Context(), r.ID)
		again, err := s.JoinLive(t.Context(), &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: live.ID, MinParticipants: 4, MaxParticipants: 4}, r, time.Hour, t0)
		if err != nil || again.ID != sess.ID {
			t.Errorf("join again: %v, %v; want %s", again, err, sess.ID)
		}
		err = s.LeaveForming(t.Context(), r.ID)
		if sess.Status == evaluation.SessionForming && err != nil {
			t.Errorf("leaving a forming session: %v", err)
		}
		if sess.Status == evaluation.SessionActive && !errors.Is(err, registry.ErrConflict) {
			t.Errorf("leaving an active session: %v, want ErrConflict", err)
		}
	}
	if err := s.LeaveForming(t.Context(), "reg_never_seated"); err != nil {
		t.Errorf("leaving without a seat: %v", err)
	}
}

func testGradeSession(t *testing.T, s SessionFullStore) {
	agents, _, live := sessionWorld(t, s, 4)
	var regs []*evaluation.Registration
	var sess *evaluation.Session
	for _, a := range agents[:2] {
		r := startedRegistration(t, s, a, live)
		regs = append(regs, r)
		var err error
		if sess, err = s.JoinLive(t.Context(), &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: live.ID, MinParticipants: 2, MaxParticipants: 2}, r, time.Hour, t0); err != nil {
			t.Fatal(err)
		}
	}
	proctor, other := agents[2], agents[3]
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for _, p := range []*registry.Agent{proctor, other, proctor, other} {
		wg.Go(func() {
			if _, err := s.ClaimSession(t.Context(), sess.ID, p.ID, t0, nil); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			} else if !errors.Is(err, registry.ErrConflict) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, _ := s.Session(t.Context(), sess.ID)
	if wins != 1 || got.ProctorID == "" {
		t.Fatalf("%d claims won; proctor %q", wins, got.ProctorID)
	}
	if _, err := s.ClaimSession(t.Context(), "ses_nope", proctor.ID, t0, nil); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("claiming an unknown session: %v", err)
	}
	grader := got.ProctorID
	wrong := proctor.ID
	if grader == proctor.ID {
		wrong = other.ID
	}
	results := func() []*evaluation.Result {
		var out []*evaluation.Result
		for _, r := range regs {
			out = append(out, &evaluation.Result{ID: registry.NewID("res_"), RegistrationID: r.ID, AgentID: r.AgentID, EvaluationID: live.ID,
				VersionID: r.VersionID, Version: r.Version, ContentSHA256: "x", Passed: true, CompletedAt: t0,
				Details: map[string]any{"session_id": sess.ID}})
		}
		return out
	}
	if _, err := s.GradeSession(t.Context(), sess.ID, wrong, results(), 5, t0, nil); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("grading by another agent: %v, want ErrConflict", err)
	}
	saved, err := s.GradeSession(t.Context(), sess.ID, grader, results(), 5, t0.Add(time.Minute), nil)
	if err != nil || len(saved) != 2 || saved[0].PointsEarned != 5 {
		t.Fatalf("grade = %+v, %v", saved, err)
	}
	if _, err := s.GradeSession(t.Context(), sess.ID, grader, results(), 5, t0, nil); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("grading twice: %v, want ErrConflict", err)
	}
	ended, _ := s.Session(t.Context(), sess.ID)
	if ended.Status != evaluation.SessionEnded || ended.EndedAt.IsZero() {
		t.Errorf("session after grading: %+v", ended)
	}
	for _, r := range regs {
		reg, _ := s.Registration(t.Context(), r.ID)
		if reg.Status != evaluation.RegCompleted {
			t.Errorf("registration %s is %s", r.ID, reg.Status)
		}
	}
}

func testPendingAndSubscribe(t *testing.T, s SessionFullStore) {
	agents, proctored, _ := sessionWorld(t, s, 3)
	r0 := startedRegistration(t, s, agents[0], proctored)
	startedRegistration(t, s, agents[1], proctored)
	pending, err := s.PendingRegistrations(t.Context(), proctored.ID, agents[0].ID, evaluation.RegInProgress)
	if err != nil || len(pending) != 1 || pending[0].CandidateID != agents[1].ID || !strings.HasPrefix(pending[0].CandidateName, "s-agent-1") {
		t.Fatalf("pending for agent 0 = %+v, %v; want only agent 1's", pending, err)
	}
	sess := proctoredSession(t, s, agents[2], agents[0], r0)
	if pending, _ := s.PendingRegistrations(t.Context(), proctored.ID, agents[2].ID, evaluation.RegInProgress); len(pending) != 1 {
		t.Errorf("a claimed registration is still pending: %+v", pending)
	}
	sub := s.Subscribe(t.Context(), sess.ID)
	defer sub.Close()
	time.Sleep(100 * time.Millisecond) // let a listener connect where there is one
	if _, err := s.PostMessage(t.Context(), &evaluation.SessionMessage{ID: registry.NewID("msg_"), SessionID: sess.ID, SenderID: agents[0].ID,
		Role: evaluation.RoleCandidate, Content: "hi", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for got := false; !got; {
		select {
		case <-sub.Wake():
		case <-deadline:
			t.Fatal("no wake-up after a message")
		}
		msgs, reread := sub.Take()
		if reread { // the stream reads the database instead
			ms, err := s.Messages(t.Context(), sess.ID, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			msgs = nil
			for _, m := range ms {
				msgs = append(msgs, *m)
			}
		}
		for _, m := range msgs {
			got = got || m.Content == "hi" && m.Sequence == 1
		}
	}
	if got, role, err := s.Membership(t.Context(), sess.ID, agents[0].ID); err != nil || got.ID != sess.ID || role != evaluation.RoleCandidate {
		t.Errorf("membership of the candidate = %v %q, %v", got, role, err)
	}
	if _, role, err := s.Membership(t.Context(), sess.ID, agents[1].ID); err != nil || role != "" {
		t.Errorf("membership of a stranger = %q, %v", role, err)
	}
	if _, _, err := s.Membership(t.Context(), "ses_nope", agents[0].ID); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("membership of an unknown session: %v", err)
	}
	sessions, roles, err := s.AgentSessions(t.Context(), agents[0].ID)
	if err != nil || len(sessions) != 1 || sessions[0].ID != sess.ID || roles[0] != evaluation.RoleCandidate {
		t.Errorf("agent sessions = %+v %v, %v", sessions, roles, err)
	}
}

// testEndSession: a session past its end is listed as overdue, and ending
// it races a grade: of the two, one wins and every participant has one
// result.
func testEndSession(t *testing.T, s SessionFullStore) {
	for round := range 3 {
		agents, proctored, _ := sessionWorld(t, s, 2)
		proctor, cand := agents[0], agents[1]
		reg := startedRegistration(t, s, cand, proctored)
		sess, err := s.ClaimRegistration(t.Context(), &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: proctored.ID,
			RegistrationID: reg.ID, VersionID: reg.VersionID, CreatedAt: t0, EndsAt: t0.Add(10 * time.Minute)}, proctor.ID, cand.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !sess.EndsAt.Equal(t0.Add(10*time.Minute)) || sess.VersionID != reg.VersionID {
			t.Errorf("claimed session %+v; want ends_at and the version kept", sess)
		}
		overdue := func(before time.Time) bool {
			got, err := s.OverdueSessions(t.Context(), before, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range got {
				if o.ID == sess.ID {
					return true
				}
			}
			return false
		}
		if overdue(t0.Add(10*time.Minute - time.Second)) {
			t.Error("a session is overdue before its end")
		}
		if !overdue(t0.Add(10 * time.Minute)) {
			t.Fatal("a session past its end is not overdue")
		}
		res := func(outcome evaluation.Outcome) []*evaluation.Result {
			r := result(reg, outcome == evaluation.OutcomePassed, t0.Add(time.Hour))
			r.ID, r.Outcome = registry.NewID("res_"), outcome
			return []*evaluation.Result{r}
		}
		var graded, ended error
		var wg sync.WaitGroup
		wg.Go(func() {
			_, graded = s.GradeSession(t.Context(), sess.ID, proctor.ID, res(evaluation.OutcomePassed), 5, t0.Add(time.Hour), nil)
		})
		wg.Go(func() {
			_, ended = s.EndSession(t.Context(), sess.ID, res(evaluation.OutcomeNotGraded), t0.Add(time.Hour))
		})
		wg.Wait()
		if (graded == nil) == (ended == nil) || graded != nil && !errors.Is(graded, registry.ErrConflict) || ended != nil && !errors.Is(ended, registry.ErrConflict) {
			t.Fatalf("round %d: grade %v, end %v; want exactly one to win and the other ErrConflict", round, graded, ended)
		}
		rs, _, err := s.Results(t.Context(), evaluation.ResultFilter{AgentID: cand.ID, Viewer: cand.ID, Limit: 10})
		if err != nil || len(rs) != 1 {
			t.Fatalf("round %d: %d results, %v; want one", round, len(rs), err)
		}
		if want := map[bool]evaluation.Outcome{true: evaluation.OutcomePassed, false: evaluation.OutcomeNotGraded}[graded == nil]; rs[0].EndedAs() != want {
			t.Errorf("round %d: outcome %s, want %s", round, rs[0].EndedAs(), want)
		}
		if overdue(t0.Add(1000 * time.Hour)) {
			t.Errorf("round %d: an ended session is still overdue", round)
		}
	}
}

// testLiveSeatsOneVersion: registrations of two versions of one SIP are
// never seated together.
func testLiveSeatsOneVersion(t *testing.T, s SessionFullStore) {
	agents, _, live := sessionWorld(t, s, 2)
	v1 := startedRegistration(t, s, agents[0], live)
	changed := siptestSIP(2, "live-eval")
	changed.Content = []byte(strings.NewReplacer(`version: "1.0.0"`, `version: "1.1.0"`, "updated_at: 2026-01-01", "updated_at: 2026-01-02").Replace(string(changed.Content)))
	mustSync(t, s, []registry.File{siptestSIP(1, "proctored-eval"), changed}, "c2", t0)
	live, _ = s.Entry(t.Context(), "live-eval")
	v2 := startedRegistration(t, s, agents[1], live)
	if v1.VersionID == v2.VersionID {
		t.Fatal("the resync made no new version")
	}
	tmpl := func() *evaluation.Session {
		return &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: live.ID, MinParticipants: 2, MaxParticipants: 4}
	}
	s1, err := s.JoinLive(t.Context(), tmpl(), v1, time.Hour, t0)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := s.JoinLive(t.Context(), tmpl(), v2, time.Hour, t0)
	if err != nil {
		t.Fatal(err)
	}
	if s1.ID == s2.ID || s1.VersionID != v1.VersionID || s2.VersionID != v2.VersionID {
		t.Errorf("sessions %s (version %d) and %s (version %d); want one per version", s1.ID, s1.VersionID, s2.ID, s2.VersionID)
	}
}
