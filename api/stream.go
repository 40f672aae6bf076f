package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
)

// Stream timing: a comment keeps idle connections alive through proxies;
// a periodic read covers a wake-up lost while a replica's LISTEN
// connection was reconnecting.
const (
	streamKeepAlive = 15 * time.Second
	streamRecheck   = 2 * time.Second
)

// streamMessages answers GET …/sessions/{session}/messages/stream with
// Server-Sent Events: every message after ?since (or Last-Event-ID) as
// an event "message" whose id is its sequence, as soon as it is posted on
// any replica; an event "ended" when the session ends, then it closes.
func (s *Server) streamMessages(c echo.Context, a *registry.Agent) error {
	since, err := sinceParam(c)
	if err != nil {
		return err
	}
	if last := c.Request().Header.Get("Last-Event-ID"); last != "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return badRequest("Last-Event-ID", "Last-Event-ID must be a message sequence", "Reconnect with the id of the last event received.")
		}
		since = max(since, n)
	}
	sess, _, err := s.sessionOf(c, a)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// Subscribe before the first read, so nothing posted in between is
	// missed.
	wake, cancel := s.sessions.Subscribe(ctx, sess.ID)
	defer cancel()

	w := c.Response()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Flush()
	rc := http.NewResponseController(w.Writer)

	lastStatus, checkStatus := "", true
	keepAlive := time.NewTicker(streamKeepAlive)
	defer keepAlive.Stop()
	recheck := time.NewTicker(streamRecheck)
	defer recheck.Stop()
	for {
		ms, err := s.sessions.Messages(ctx, sess.ID, since, registry.MaxPageSize)
		if err != nil {
			return nil // the response has started: end the stream; the client reconnects with Last-Event-ID
		}
		for _, m := range ms {
			data, _ := json.Marshal(toMessage(m))
			if _, err := fmt.Fprintf(w, "id: %d\nevent: message\ndata: %s\n\n", m.Sequence, data); err != nil {
				return nil
			}
			since = m.Sequence
		}
		if len(ms) == registry.MaxPageSize {
			continue // more are waiting
		}
		// A wake-up that brought messages needs no look at the session:
		// status changes come with wake-ups of their own (or the recheck).
		if len(ms) == 0 || lastStatus != string(registry.SessionActive) || checkStatus {
			checkStatus = false
			cur, err := s.sessions.Session(ctx, sess.ID)
			if err != nil {
				return nil
			}
			view := toSession(cur, s.now())
			if view.Status != lastStatus {
				// "session" when it starts (and first of all); "ended" last.
				event := "session"
				if view.Status == string(registry.SessionEnded) {
					event = "ended"
				}
				data, _ := json.Marshal(view)
				if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil || event == "ended" {
					w.Flush()
					return nil
				}
				lastStatus = view.Status
			}
		}
		rc.SetWriteDeadline(time.Time{})
		w.Flush()
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-recheck.C:
			checkStatus = true
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
		}
	}
}
