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
	backoff := notifyRetry
	for {
		select {
		case <-s.ctx.Done():
			s.flushNotifications() // best effort: streams also re-read now and then
			return
		case <-n.wake:
		}
		if s.flushNotifications() {
			backoff = notifyRetry
			continue
		}
		// The database did not take them: they were put back; try again
		// soon, then less often, while it is away.
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
		select {
		case n.wake <- struct{}{}:
		default:
		}
	}
}

// notifyRetry is the first wait before notifications are sent again.
const notifyRetry = 100 * time.Millisecond

// flushNotifications sends the pending notifications in one statement.
// When that fails they are put back, to go with the next attempt; it
// reports whether they went.
func (s *Store) flushNotifications() bool {
	n := &s.notifier
	n.mu.Lock()
	ids := make([]string, 0, len(n.pending))
	for id := range n.pending {
		ids = append(ids, id)
	}
	n.pending = nil
	n.mu.Unlock()
	if len(ids) == 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 5*time.Second)
	defer cancel()
	_, err := s.pool.Exec(ctx, "SELECT pg_notify($1, current_schema() || '/' || $2 || '/' || id) FROM unnest($3::text[]) AS id", notifyChannel, s.instance, ids)
	if err == nil {
		return true
	}
	n.mu.Lock()
	if n.pending == nil {
		n.pending = map[string]struct{}{}
	}
	for _, id := range ids {
		n.pending[id] = struct{}{}
	}
	n.mu.Unlock()
	return false
}

func (n *notifier) stop() {
	n.once.Do(func() {}) // none starts after Close; orders the read below
	if n.done != nil {
		<-n.done
	}
}
