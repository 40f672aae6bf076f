// Package broker fans events of a topic out to the subscribers of this
// process. An event may carry an item (a message posted here) or nothing,
// which tells the subscriber to read what changed from the database; a
// subscriber that falls behind loses its items and is told to read too,
// so nothing is ever lost, only fetched the slow way.
package broker

import "sync"

// maxQueue is how many items a subscriber may hold before it is told to
// read from the database instead.
const maxQueue = 512

// Broker is safe for concurrent use. The zero value is ready.
type Broker[T any] struct {
	mu   sync.Mutex
	subs map[string]map[*Sub[T]]struct{}
}

// Sub is one subscription.
type Sub[T any] struct {
	b     *Broker[T]
	topic string
	wake  chan struct{}
	mu    sync.Mutex
	items []T
	lost  bool
	once  sync.Once
}

// Subscribe subscribes to topic.
func (b *Broker[T]) Subscribe(topic string) *Sub[T] {
	s := &Sub[T]{b: b, topic: topic, wake: make(chan struct{}, 1)}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[string]map[*Sub[T]]struct{}{}
	}
	if b.subs[topic] == nil {
		b.subs[topic] = map[*Sub[T]]struct{}{}
	}
	b.subs[topic][s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Publish gives item to every subscriber of topic and wakes them; without
// an item (nil) they are told to read from the database.
func (b *Broker[T]) Publish(topic string, item *T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs[topic] {
		s.add(item)
	}
}

// PublishAll tells every subscriber of every topic to read from the
// database (after a lost connection, when events may have been missed).
func (b *Broker[T]) PublishAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, subs := range b.subs {
		for s := range subs {
			s.add(nil)
		}
	}
}

// Topics counts the topics with subscribers.
func (b *Broker[T]) Topics() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

func (s *Sub[T]) add(item *T) {
	s.mu.Lock()
	switch {
	case item == nil || len(s.items) >= maxQueue:
		s.lost, s.items = true, nil
	case !s.lost:
		s.items = append(s.items, *item)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Wake receives a value when events are waiting.
func (s *Sub[T]) Wake() <-chan struct{} { return s.wake }

// Take returns the items published since the last Take, and whether the
// subscriber must read from the database (some were not delivered here).
func (s *Sub[T]) Take() ([]T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	items, lost := s.items, s.lost
	s.items, s.lost = nil, false
	return items, lost
}

// Close ends the subscription.
func (s *Sub[T]) Close() {
	s.once.Do(func() {
		b := s.b
		b.mu.Lock()
		delete(b.subs[s.topic], s)
		if len(b.subs[s.topic]) == 0 {
			delete(b.subs, s.topic)
		}
		b.mu.Unlock()
	})
}
