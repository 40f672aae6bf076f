package postgres

import (
	"testing"
	"time"
)

// TestNotificationsWaitForTheDatabase: notifications the database did not
// take are kept for the next attempt, not dropped.
func TestNotificationsWaitForTheDatabase(t *testing.T) {
	s, err := Open(t.Context(), "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1") // nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.notifyLater("ses_a")
	s.notifyLater("ses_b")
	time.Sleep(250 * time.Millisecond) // the first attempt and a retry fail
	// They are out of the map only while an attempt runs.
	var a, b bool
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && !(a && b); time.Sleep(5 * time.Millisecond) {
		s.notifier.mu.Lock()
		_, a = s.notifier.pending["ses_a"]
		_, b = s.notifier.pending["ses_b"]
		s.notifier.mu.Unlock()
	}
	if !a || !b {
		t.Errorf("after failed attempts the notifications were dropped: ses_a kept %v, ses_b kept %v", a, b)
	}
}
