package api

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// Stream timing: a comment keeps idle connections alive through proxies;
// a slow periodic read covers a wake-up that never came (a replica that
// died between a commit and its NOTIFY); everything else wakes streams
// when it happens, so an idle stream costs the database nothing: a
// message, a status change, a LISTEN connection back after a drop, and
// the end of a session's time (a timer).
const (
	streamKeepAlive = 15 * time.Second
	streamRecheck   = 30 * time.Second
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
	sub := s.runtime.Subscribe(ctx, sess.ID)
	defer sub.Close()

	w := c.Response()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Flush()
	rc := http.NewResponseController(w.Writer)

	lastStatus, checkStatus, reread := "", true, true
	var fresh []evaluation.SessionMessage // posted through this replica, from the subscription
	keepAlive := time.NewTicker(streamKeepAlive)
	defer keepAlive.Stop()
	recheck := time.NewTimer(jitter(streamRecheck))
	defer recheck.Stop()
	timeUp := time.NewTimer(time.Hour) // armed at the session's ends_at
	timeUp.Stop()
	defer timeUp.Stop()
	for {
		// Messages posted here come with the wake-up; when they follow
		// the last one sent without a gap they are sent as they are,
		// otherwise (posted elsewhere, out of order, too many) the
		// database is read.
		ms, ok := contiguous(fresh, since)
		if reread || !ok {
			read, err := s.runtime.Messages(ctx, sess.ID, since, registry.MaxPageSize)
			if err != nil {
				return nil // the response has started: end it; the client reconnects with Last-Event-ID
			}
			ms = read
		}
		for _, m := range ms {
			data, _ := json.Marshal(toMessage(m))
			if _, err := fmt.Fprintf(w, "id: %d\nevent: message\ndata: %s\n\n", m.Sequence, data); err != nil {
				return nil
			}
			since = m.Sequence
		}
		reread = len(ms) == registry.MaxPageSize // more are waiting
		if reread {
			continue
		}
		// A wake-up that brought messages needs no look at the session:
		// status changes come with bare wake-ups of their own, and the
		// timer with the end of the session's time.
		if lastStatus != string(evaluation.SessionActive) || checkStatus {
			checkStatus = false
			cur, err := s.runtime.Session(ctx, sess.ID)
			if err != nil {
				return nil
			}
			view := toSession(cur, s.now())
			if view.Status != lastStatus {
				// "session" when it starts (and first of all); "ended" last.
				event := "session"
				if view.Status == string(evaluation.SessionEnded) {
					event = "ended"
				}
				data, _ := json.Marshal(view)
				if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data); err != nil || event == "ended" {
					w.Flush()
					return nil
				}
				lastStatus = view.Status
			}
			if view.Status == string(evaluation.SessionActive) && !cur.EndsAt.IsZero() {
				timeUp.Reset(cur.EndsAt.Sub(s.now()) + time.Millisecond)
			}
		}
		rc.SetWriteDeadline(time.Time{})
		w.Flush()
		select {
		case <-ctx.Done():
			return nil
		case <-sub.Wake():
			// An empty take is a wake-up whose message an earlier take
			// already had; a lost one (a bare wake-up, an overflow)
			// means read, and may be a status change.
			fresh, reread = sub.Take()
			checkStatus = reread
		case <-recheck.C:
			recheck.Reset(jitter(streamRecheck))
			checkStatus, reread, fresh = true, true, nil
		case <-timeUp.C:
			checkStatus, fresh = true, nil
		case <-keepAlive.C:
			fresh = nil
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
		}
	}
}

// jitter spreads a period over ±25%, so that streams opened together do
// not read the database together ever after: 200 streams rechecking in
// the same few milliseconds (every 2 s, then) held every post behind
// them for 20-50 ms.
func jitter(d time.Duration) time.Duration {
	return d*3/4 + rand.N(d/2)
}

// contiguous sorts the messages a subscription delivered and returns
// those after since, if they follow it without a gap.
func contiguous(fresh []evaluation.SessionMessage, since int64) ([]*evaluation.SessionMessage, bool) {
	if len(fresh) == 0 {
		return nil, true
	}
	slices.SortFunc(fresh, func(a, b evaluation.SessionMessage) int { return cmp.Compare(a.Sequence, b.Sequence) })
	out := make([]*evaluation.SessionMessage, 0, len(fresh))
	next := since + 1
	for i := range fresh {
		switch m := &fresh[i]; {
		case m.Sequence < next:
			continue // sent already
		case m.Sequence == next:
			out = append(out, m)
			next++
		default:
			return nil, false // a gap: something was posted elsewhere
		}
	}
	return out, true
}
