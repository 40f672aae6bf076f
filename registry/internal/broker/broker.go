// Package broker fans "something happened on topic T" out to the
// subscribers of this process. It carries no data: a subscriber reads
// what changed from the database, so a dropped or merged wake-up loses
// nothing.
package broker

import "sync"

// Broker is safe for concurrent use. The zero value is ready.
type Broker struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// Subscribe returns a channel that receives a value after each Publish of
// topic (wake-ups that come while one is pending are merged), and a
// function that ends the subscription.
func (b *Broker) Subscribe(topic string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[string]map[chan struct{}]struct{}{}
	}
	if b.subs[topic] == nil {
		b.subs[topic] = map[chan struct{}]struct{}{}
	}
	b.subs[topic][ch] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs[topic], ch)
			if len(b.subs[topic]) == 0 {
				delete(b.subs, topic)
			}
			b.mu.Unlock()
		})
	}
}

// Publish wakes every subscriber of topic without blocking.
func (b *Broker) Publish(topic string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[topic] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// PublishAll wakes every subscriber of every topic (after a lost
// connection, when wake-ups may have been missed).
func (b *Broker) PublishAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, subs := range b.subs {
		for ch := range subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// Topics counts the topics with subscribers.
func (b *Broker) Topics() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}
