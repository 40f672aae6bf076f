package postgres_test

import (
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
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
	reg, _, err := a.Register(ctx, &registry.Registration{ID: "reg_1", AgentID: agent.ID, EvaluationID: e.ID, VersionID: e.Current.ID, RegisteredAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := a.JoinLive(ctx, &registry.Session{ID: "ses_1", EvaluationID: e.ID, MinParticipants: 1, MaxParticipants: 2}, reg, time.Hour, time.Now())
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
	if _, err := a.PostMessage(ctx, &registry.SessionMessage{ID: "msg_1", SessionID: sess.ID, SenderID: agent.ID, Role: registry.RoleParticipant,
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
