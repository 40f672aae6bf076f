package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/postgres"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
	"github.com/sipregistry/sip/registry/siptest"
)

// TestMessagesWakeOtherReplicas: a stream on one replica wakes when a
// message is posted through another (LISTEN/NOTIFY), and only for its own
// schema's sessions.
func TestMessagesWakeOtherReplicas(t *testing.T) {
	url := postgrestest.URL(t)
	a, b := postgrestest.OpenURL(t, url), postgrestest.OpenURL(t, url)
	ctx := t.Context()
	if _, err := registry.Sync(ctx, a, registry.Source{Files: []registry.File{siptest.SIP(1, "live", "active")}, Commit: "c1", Name: "t"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	agent, _, _ := registry.NewAgent("replica-agent", "", time.Now())
	if err := a.CreateAgent(ctx, agent); err != nil {
		t.Fatal(err)
	}
	e, _ := a.Entry(ctx, "live")
	reg, _, err := a.Register(ctx, &evaluation.Registration{ID: "reg_1", AgentID: agent.ID, EvaluationID: e.ID, VersionID: e.Current.ID, RegisteredAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := a.JoinLive(ctx, &evaluation.Session{ID: "ses_1", EvaluationID: e.ID, MinParticipants: 1, MaxParticipants: 2}, reg, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The first subscription returns once LISTEN is in place, so nothing
	// tells it to read again afterwards: 200 streams opened at start used
	// to be sent back to the database together.
	sub := b.Subscribe(ctx, sess.ID)
	defer sub.Close()
	select {
	case <-sub.Wake():
		t.Fatal("a subscription made before anything happened was woken")
	case <-time.After(200 * time.Millisecond):
	}
	start := time.Now()
	if _, err := a.PostMessage(ctx, &evaluation.SessionMessage{ID: "msg_1", SessionID: sess.ID, SenderID: agent.ID, Role: evaluation.RoleParticipant,
		Content: "from replica a", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sub.Wake():
		if _, reread := sub.Take(); !reread {
			t.Error("a message from another replica must make the stream read the database")
		}
		t.Logf("replica b woke %v after the post on replica a", time.Since(start))
	case <-time.After(5 * time.Second):
		t.Fatal("replica b was not woken by a message posted on replica a")
	}
}

// TestSyncStateAcrossReplicas: a server's store keeps the sync state in
// memory, yet a sync applied by another replica is seen as soon as its
// notification arrives, one applied by this replica at once, and one
// that never notified (a replica of an older version) within a second.
func TestSyncStateAcrossReplicas(t *testing.T) {
	url := postgrestest.URL(t)
	a, b := postgrestest.OpenURL(t, url), postgrestest.OpenURL(t, url)
	ctx := t.Context()
	sync := func(s *postgres.Store, commit string, n int) {
		t.Helper()
		if _, err := registry.Sync(ctx, s, registry.Source{Files: []registry.File{siptest.SIP(n, fmt.Sprintf("e%d", n), "active")}, Commit: commit, Name: "t"}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(s *postgres.Store, commit string, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		for {
			st, err := s.SyncState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.CommitSHA == commit {
				return time.Since(start)
			}
			if time.Since(start) > within {
				t.Fatalf("after %v the replica still reads commit %q, want %q", within, st.CommitSHA, commit)
			}
			time.Sleep(time.Millisecond)
		}
	}
	sync(a, "c1", 1)
	waitFor(b, "c1", 2*time.Second) // b's LISTEN comes up, b reads and keeps c1

	sync(a, "c2", 2)
	t.Logf("replica b saw replica a's sync after %v", waitFor(b, "c2", 500*time.Millisecond))

	sync(b, "c3", 3)
	if st, err := b.SyncState(ctx); err != nil || st.CommitSHA != "c3" {
		t.Errorf("right after its own sync replica b reads %+v, %v", st, err)
	}
	waitFor(a, "c3", 500*time.Millisecond)

	// No notification: the state is read again within the second.
	conn, err := pgx.Connect(ctx, strings.Split(url, "?")[0]+"?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	schema := ""
	for _, kv := range strings.Split(strings.SplitN(url, "?", 2)[1], "&") {
		if v, ok := strings.CutPrefix(kv, "search_path="); ok {
			schema = v
		}
	}
	time.Sleep(50 * time.Millisecond) // b's own notification has come back
	waitFor(b, "c3", time.Second)     // b keeps c3 in memory
	if _, err := conn.Exec(ctx, "UPDATE "+schema+".sync_state SET commit_sha = 'silent'"); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.SyncState(ctx); st.CommitSHA != "c3" {
		t.Errorf("replica b read %q: it does not keep the sync state in memory", st.CommitSHA)
	}
	t.Logf("a sync that never notified was seen after %v", waitFor(b, "silent", 2*time.Second))
}
