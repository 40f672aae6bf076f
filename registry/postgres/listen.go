package postgres

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// notifyChannel carries "schema/instance/topic": a session id when a
// session's channel changes, so the streams of every other replica wake
// up (a replica hears its own notifications too, and ignores them: its
// streams were told directly), or syncTopic when a sync was applied.
const notifyChannel = "sip_session_messages"

// syncTopic is the topic of a sync's notification; session ids start
// with "ses_", so it cannot be one.
const syncTopic = "!sync"

// firstListenWait bounds how long the first subscriptions wait for LISTEN.
const firstListenWait = 2 * time.Second

// syncStateTTL bounds how long SyncState answers from memory even while
// LISTEN is in place: the safety net for a notification that never came
// (a replica of an older version, a connection that died silently).
const syncStateTTL = time.Second

// startListening starts the one LISTEN connection of this process, once.
func (s *Store) startListening() {
	s.listenOnce.Do(func() {
		s.listenDone, s.listening = make(chan struct{}), make(chan struct{})
		go s.listen()
	})
}

// Subscribe wakes on messages posted to a session by any replica: one
// connection per process LISTENs and fans notifications out.
//
// The first subscriptions wait (up to firstListenWait) for the LISTEN
// connection to be in place, so that they miss nothing posted elsewhere
// without being woken to read again once it is: 200 streams opened
// together at start were otherwise all sent back to the database at once.
func (s *Store) Subscribe(ctx context.Context, sessionID string) evaluation.Subscription {
	s.startListening()
	t := time.NewTimer(firstListenWait)
	defer t.Stop()
	select {
	case <-s.listening:
	case <-ctx.Done():
	case <-t.C: // the reconnect's wake-up covers this subscriber
	}
	return s.broker.Subscribe(sessionID)
}

// listen holds a dedicated connection that LISTENs for session changes
// and syncs, reconnecting after failures; after a reconnect every
// subscriber is woken and the sync state is read again, since
// notifications may have been missed.
func (s *Store) listen() {
	defer close(s.listenDone)
	var first sync.Once
	defer first.Do(func() { close(s.listening) })
	for s.ctx.Err() == nil {
		err := s.listenOnConn(func() {
			s.syncCache.reset(true)
			// Whoever subscribed before LISTEN was in place may have
			// missed a notification: wake them to read.
			s.broker.PublishAll()
			first.Do(func() { close(s.listening) })
		})
		s.syncCache.reset(false)
		if s.ctx.Err() != nil {
			return
		}
		_ = err
		first.Do(func() { close(s.listening) }) // the first attempt failed: don't hold subscribers
		s.broker.PublishAll()
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (s *Store) listenOnConn(listening func()) error {
	pc, err := s.pool.Acquire(s.ctx)
	if err != nil {
		return err
	}
	conn := pc.Hijack() // a LISTENing connection must not return to the pool
	defer conn.Close(context.WithoutCancel(s.ctx))
	var schema string
	if err := conn.QueryRow(s.ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	if _, err := conn.Exec(s.ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	listening()
	prefix := schema + "/"
	for {
		n, err := conn.WaitForNotification(s.ctx)
		if err != nil {
			return err
		}
		rest, ok := strings.CutPrefix(n.Payload, prefix)
		if !ok {
			continue // another schema's registry
		}
		instance, topic, ok := strings.Cut(rest, "/")
		switch {
		case !ok:
		case topic == syncTopic:
			s.syncCache.reset(true) // ours too: cheap, and syncs are rare
		case instance != s.instance:
			s.broker.Publish(topic, nil)
		}
	}
}

// notifySync tells every replica, when tx commits, that the registry
// moved to a new generation.
func (s *Store) notifySync(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SELECT pg_notify($1, current_schema() || '/' || $2 || '/' || $3)", notifyChannel, s.instance, syncTopic)
	return err
}

// syncCache holds the sync state while LISTEN is in place: every sync
// notifies, so the state can only change with a notification (or within
// syncStateTTL). A server's every request asks for it; this spares the
// database that query. The kept state is read without the lock (an
// atomic pointer, set and cleared under it).
type syncCache struct {
	mu    sync.Mutex
	live  bool                          // LISTEN is in place
	epoch uint64                        // bumped by every reset, so a read that raced one is not kept
	kept  atomic.Pointer[keptSyncState] // nil when none is
}

// keptSyncState is a state and when it was kept. It is never modified.
type keptSyncState struct {
	state registry.SyncState
	at    time.Time
}

// reset forgets the state and records whether LISTEN is in place.
func (c *syncCache) reset(live bool) {
	c.mu.Lock()
	c.live = live
	c.kept.Store(nil)
	c.epoch++
	c.mu.Unlock()
}

// forget drops the state (after this process applied a sync).
func (c *syncCache) forget() {
	c.mu.Lock()
	c.kept.Store(nil)
	c.epoch++
	c.mu.Unlock()
}

// get returns the kept state, if it is fresh; otherwise the epoch a read
// must pass to put.
func (c *syncCache) get() (registry.SyncState, uint64, bool) {
	if k := c.kept.Load(); k != nil && time.Since(k.at) < syncStateTTL { // kept only while live
		return k.state, 0, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.kept.Load(); c.live && k != nil && time.Since(k.at) < syncStateTTL {
		return k.state, c.epoch, true
	}
	return registry.SyncState{}, c.epoch, false
}

// put keeps a state read since get returned epoch, unless a reset or a
// notification came in between.
func (c *syncCache) put(st registry.SyncState, epoch uint64) {
	c.mu.Lock()
	if c.live && c.epoch == epoch {
		c.kept.Store(&keptSyncState{state: st, at: time.Now()})
	}
	c.mu.Unlock()
}
