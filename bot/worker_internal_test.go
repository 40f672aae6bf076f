package bot

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// TestPanicIsRecovered: a panic in the work of a delivery is a failed
// attempt (with its stack in the error), not a dead process; the next
// attempt succeeds.
func TestPanicIsRecovered(t *testing.T) {
	st := sqlitetest.Open(t)
	a, err := New(Config{AppID: 1, PrivateKey: testKey(t), WebhookSecrets: []string{"s"}, Store: st, Workers: 1,
		Poll: 10 * time.Millisecond, ReconcileEvery: time.Hour, Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	a.handleFn = func(ctx context.Context, d *inbox.Delivery) error {
		if calls.Add(1) == 1 {
			panic("boom")
		}
		return nil
	}
	a.reconcileFn = func(context.Context) error { return nil }
	if _, _, err := st.EnqueueDelivery(t.Context(), &inbox.Delivery{ID: "d1", Event: "push", Payload: []byte(`{}`), ReceivedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := st.Delivery(t.Context(), "d1")
		if err == nil && d.Status == inbox.Done {
			if d.Attempts != 2 {
				t.Errorf("attempts = %d, want 2", d.Attempts)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done: %+v, %v", d, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := a.metrics.processed.WithLabelValues("push", "panic").Value(); got != 1 {
		t.Errorf("panic counter = %v; want 1", got)
	}
}

func testKey(t *testing.T) []byte {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

// TestUninstalledIsGivenUpAtOnce: GitHub refusing an installation's token
// with 404 means the App was uninstalled; no retry can help.
func TestUninstalledIsGivenUpAtOnce(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"token refused with 404", fmt.Errorf("sync: %w", &ghinstallation.HTTPError{Response: &http.Response{StatusCode: http.StatusNotFound}}), true},
		{"token endpoint failing", fmt.Errorf("sync: %w", &ghinstallation.HTTPError{Response: &http.Response{StatusCode: http.StatusBadGateway}}), false},
		{"no response", &ghinstallation.HTTPError{}, false},
		{"another error", errors.New("boom"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := uninstalled(tt.err); got != tt.want {
				t.Errorf("uninstalled(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
