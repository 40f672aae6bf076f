package broker

import (
	"testing"
	"time"
)

func TestBroker(t *testing.T) {
	var b Broker
	a, cancelA := b.Subscribe("s1")
	c, cancelC := b.Subscribe("s1")
	other, cancelOther := b.Subscribe("s2")
	defer cancelOther()
	b.Publish("s1")
	b.Publish("s1") // merged with the pending one
	for _, ch := range []<-chan struct{}{a, c} {
		select {
		case <-ch:
		case <-time.After(time.Second):
			t.Fatal("no wake-up")
		}
	}
	select {
	case <-other:
		t.Fatal("another topic woke")
	default:
	}
	cancelA()
	cancelA()
	cancelC()
	if b.Topics() != 1 {
		t.Errorf("%d topics after unsubscribing, want 1", b.Topics())
	}
	b.Publish("nobody") // no subscriber: nothing happens
}
