package main

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// logSink is a bytes.Buffer safe for the flush timer's goroutine.
type logSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLogBuffer: info lines wait for the timer, a warning writes them and
// itself at once, in order, and Flush writes what is left.
func TestLogBuffer(t *testing.T) {
	var out logSink
	buf := newLogBuffer(&out)
	log := newLogger(buf, "text")
	log.Info("first")
	log.Info("second")
	log.Warn("trouble")
	got := out.String()
	if strings.Count(got, "\n") != 3 || !(strings.Index(got, "first") < strings.Index(got, "second") && strings.Index(got, "second") < strings.Index(got, "trouble")) {
		t.Fatalf("after a warning the output is %q; want first, second, trouble", got)
	}
	log.Info("later")
	deadline := time.Now().Add(10 * time.Second) // the timer writes it within logFlushEvery; a loaded machine may be slower
	for !strings.Contains(out.String(), "later") {
		if time.Now().After(deadline) {
			t.Fatalf("an info line was not written by the timer: %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	log.Info("last")
	if err := buf.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "msg=last\n") {
		t.Errorf("Flush left the last line out: %q", out.String())
	}
}

// TestLogBufferFull: lines beyond the buffer's size are written without
// waiting, whole and in order.
func TestLogBufferFull(t *testing.T) {
	var out logSink
	buf := newLogBuffer(&out)
	line := strings.Repeat("x", 1000) + "\n"
	n := 2 * logBufferSize / len(line)
	for range n {
		buf.Write([]byte(line))
	}
	if len(out.String()) == 0 {
		t.Fatal("a full buffer was not written")
	}
	buf.Flush()
	if got := out.String(); got != strings.Repeat(line, n) {
		t.Errorf("wrote %d bytes; want %d lines of %d", len(got), n, len(line))
	}
	slog.New(slog.NewTextHandler(buf, nil)).Info("ok") // still usable
}
