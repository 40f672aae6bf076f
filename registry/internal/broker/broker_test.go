package broker

import (
	"slices"
	"testing"
	"time"
)

func waitWake[T any](t *testing.T, s *Sub[T]) {
	t.Helper()
	select {
	case <-s.Wake():
	case <-time.After(time.Second):
		t.Fatal("no wake-up")
	}
}

func TestBroker(t *testing.T) {
	var b Broker[int]
	a, c, other := b.Subscribe("s1"), b.Subscribe("s1"), b.Subscribe("s2")
	defer other.Close()
	one, two := 1, 2
	b.Publish("s1", &one)
	b.Publish("s1", &two)
	for _, s := range []*Sub[int]{a, c} {
		waitWake(t, s)
		items, lost := s.Take()
		if !slices.Equal(items, []int{1, 2}) || lost {
			t.Errorf("took %v, %v", items, lost)
		}
	}
	select {
	case <-other.Wake():
		t.Fatal("another topic woke")
	default:
	}
	// A wake-up without an item means: read from the database.
	b.Publish("s1", nil)
	b.Publish("s1", &one)
	waitWake(t, a)
	if items, lost := a.Take(); len(items) != 0 || !lost {
		t.Errorf("after a bare wake-up: %v, %v; want nothing and lost", items, lost)
	}
	// A subscriber that falls behind is told to read too.
	for i := range maxQueue + 1 {
		b.Publish("s2", &i)
	}
	if items, lost := other.Take(); len(items) != 0 || !lost {
		t.Errorf("overflow: %d items, lost %v", len(items), lost)
	}
	b.PublishAll()
	if _, lost := c.Take(); !lost {
		t.Error("PublishAll did not tell subscribers to read")
	}
	a.Close()
	a.Close()
	c.Close()
	if b.Topics() != 1 {
		t.Errorf("%d topics after unsubscribing, want 1", b.Topics())
	}
}
