package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logBuffer collects the server's log lines and writes them in batches:
// one write system call per line was the largest single cost of a cached
// API request (a pipe or a terminal wakes its reader on every write). A
// line waits at most logFlushEvery; lines at warning level or above, and
// Close, write everything at once, so nothing a failure says is held back.
type logBuffer struct {
	w io.Writer

	mu    sync.Mutex
	buf   []byte
	armed bool // a flush is scheduled
	timer *time.Timer

	flushMu sync.Mutex // orders the writes of concurrent flushes
	spare   []byte     // the buffer written last, reused; under flushMu
}

const (
	logFlushEvery = 100 * time.Millisecond
	logBufferSize = 64 << 10 // a full buffer is written at once
)

func newLogBuffer(w io.Writer) *logBuffer {
	b := &logBuffer{w: w, buf: make([]byte, 0, logBufferSize)}
	b.timer = time.AfterFunc(time.Hour, func() { b.Flush() })
	b.timer.Stop()
	return b
}

// Write keeps p (a whole line: slog writes each record in one call).
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	if len(b.buf)+len(p) > logBufferSize && len(b.buf) > 0 {
		b.mu.Unlock()
		if err := b.Flush(); err != nil {
			return 0, err
		}
		b.mu.Lock()
	}
	b.buf = append(b.buf, p...)
	if !b.armed {
		b.armed = true
		b.timer.Reset(logFlushEvery)
	}
	b.mu.Unlock()
	return len(p), nil
}

// Flush writes what is kept.
func (b *logBuffer) Flush() error {
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.mu.Lock()
	out := b.buf
	b.buf, b.spare = b.spare[:0], nil
	if b.buf == nil {
		b.buf = make([]byte, 0, logBufferSize)
	}
	b.armed = false
	b.timer.Stop()
	b.mu.Unlock()
	if len(out) == 0 {
		b.spare = out
		return nil
	}
	_, err := b.w.Write(out)
	if cap(out) <= 2*logBufferSize { // a line larger than the buffer made it grow: let that go
		b.spare = out[:0]
	}
	return err
}

// flushingHandler writes the buffer after every record at warning level or
// above.
type flushingHandler struct {
	slog.Handler
	buf *logBuffer
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.buf.Flush()
	}
	return err
}

func (h flushingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushingHandler{h.Handler.WithAttrs(attrs), h.buf}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{h.Handler.WithGroup(name), h.buf}
}
