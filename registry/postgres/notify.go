package postgres

import (
	"context"
	"sync"
	"time"
)

// notifier sends the NOTIFYs of posted messages in batches: one statement
// for every session that had messages since the last one, so a commit
// never waits on the notification queue.
type notifier struct {
	once    sync.Once
	mu      sync.Mutex
	pending map[string]struct{}
	wake    chan struct{}
	done    chan struct{}
}

// notifyLater queues a NOTIFY for a session's streams on other replicas.
func (s *Store) notifyLater(sessionID string) {
	n := &s.notifier
	n.once.Do(func() {
		n.wake, n.done = make(chan struct{}, 1), make(chan struct{})
		go s.runNotifier()
	})
	n.mu.Lock()
	if n.pending == nil {
		n.pending = map[string]struct{}{}
	}
	n.pending[sessionID] = struct{}{}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (s *Store) runNotifier() {
	n := &s.notifier
	defer close(n.done)
	for {
		select {
		case <-s.ctx.Done():
			s.flushNotifications() // best effort: streams also re-read every few seconds
			return
		case <-n.wake:
		}
		s.flushNotifications()
	}
}

func (s *Store) flushNotifications() {
	n := &s.notifier
	n.mu.Lock()
	ids := make([]string, 0, len(n.pending))
	for id := range n.pending {
		ids = append(ids, id)
	}
	n.pending = nil
	n.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 5*time.Second)
	defer cancel()
	// A failure loses only wake-ups: other replicas' streams re-read on
	// their own within seconds.
	s.pool.Exec(ctx, "SELECT pg_notify($1, current_schema() || '/' || $2 || '/' || id) FROM unnest($3::text[]) AS id", notifyChannel, s.instance, ids)
}

func (n *notifier) stop() {
	n.once.Do(func() {}) // none starts after Close; orders the read below
	if n.done != nil {
		<-n.done
	}
}
