package api_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/judge"
)

// TestJudgeOutageIsWaitedOut: while the judge refuses connections or
// answers 503, a submitted job waits (its note says what happened) instead
// of failing; once the judge is back, the job is judged and passes. The
// worker's health says the judge was down, and by how.
func TestJudgeOutageIsWaitedOut(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a := w.agent("outage-1").asCandidate(t)
		a.poaw(t, false)
		q := a.benchmark(t, true)
		good := w.worker.Judge
		closed := httptest.NewServer(nil)
		closed.Close() // nothing listens there: connections are refused
		for _, tt := range []struct {
			name, wantNote string
			down           func()
		}{
			{"refused", "the judge refused the connection; the job waits", func() {
				w.worker.Judge = &judge.Client{URL: closed.URL, Model: "m"}
			}},
			{"503", "the judge is unavailable (it answered HTTP 503); the job waits", func() {
				w.worker.Judge = good
				w.judge.set("down")
			}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				tt.down()
				// Far more tries than the five unusable answers a job is
				// allowed, over 50 minutes: still inside the outage window.
				for range 10 {
					w.work(t)
					w.clock.Advance(150 * time.Second)
				}
				var job jobBody
				a.call("GET", q.PollURL, "", &job)
				if job.Job.Status != "submitted" || job.Result != nil || !strings.HasPrefix(job.Job.Note, tt.wantNote) {
					t.Fatalf("got job %+v; want it waiting with a note starting %q", job.Job, tt.wantNote)
				}
				if h := w.worker.Health(); h.Up || h.Outages["unreachable"] == 0 {
					t.Errorf("got health %+v; want down, with refused connections counted", h)
				}
			})
		}
		w.judge.set("good")
		w.clock.Advance(2 * time.Minute)
		w.work(t)
		var job jobBody
		a.call("GET", q.PollURL, "", &job)
		if job.Job.Status != "completed" || job.Result == nil || !job.Result.Passed {
			t.Fatalf("after the outage: job %+v result %+v; want completed and passed", job.Job, job.Result)
		}
		if h := w.worker.Health(); !h.Up || h.LastError != "" || h.Outages["unavailable"] == 0 {
			t.Errorf("health after the outage: %+v", h)
		}
	})
}
