package registrytest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/gitrev"
	"github.com/sipregistry/sip/registry/siptest"
)

// BenchSync measures syncing a local git repository of n SIPs into stores
// that open makes: a full sync into an empty registry, a re-sync of the
// same commit, and a sync of a commit that changes one file. Each includes
// reading the commit with go-git, as `sip sync --repo` does.
func BenchSync(b *testing.B, n int, open func(b *testing.B) registry.Store) {
	files := siptest.Generate(n, 11)
	tree := map[string]string{}
	for _, f := range files {
		tree[f.Path] = string(f.Content)
	}
	repo := siptest.NewRepo(b, tree)
	first := siptest.Git(b, repo, "rev-parse", "HEAD")
	edited := siptest.Edit(files[n/2], "9.0.0", "2026-06-01T00:00:00Z", "One more paragraph.")
	second := siptest.Commit(b, repo, "edit one SIP", map[string]string{edited.Path: string(edited.Content)})

	sync := func(b *testing.B, s registry.Store, ref string) *registry.SyncReport {
		src, err := gitrev.Fetch(b.Context(), gitrev.FetchOptions{Repo: repo, Ref: ref})
		if err != nil {
			b.Fatal(err)
		}
		r, err := registry.Sync(b.Context(), s, src, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s := open(b)
			b.StartTimer()
			if r := sync(b, s, first); len(r.Added) != n {
				b.Fatalf("added %d", len(r.Added))
			}
		}
	})
	b.Run("same-commit", func(b *testing.B) {
		s := open(b)
		sync(b, s, first)
		for b.Loop() {
			if r := sync(b, s, first); r.Applied {
				b.Fatal("re-sync applied something")
			}
		}
	})
	b.Run("one-file", func(b *testing.B) {
		s := open(b)
		for b.Loop() {
			b.StopTimer()
			s.Close()
			s = open(b)
			sync(b, s, first)
			b.StartTimer()
			if r := sync(b, s, second); len(r.Changed) != 1 {
				b.Fatalf("changed %v", r.Changed)
			}
		}
	})
}

// BenchPostFloor is the floor of the message fan-out benchmark: the bare
// PostMessage statement offered 2,000 times a second (open loop) for 5 s
// across 200 sessions, without HTTP or streams. It reports the p50 and
// p99 latency.
func BenchPostFloor(b *testing.B, open func(b *testing.B) SessionFullStore) {
	s := open(b)
	ctx := b.Context()
	if _, err := registry.Sync(ctx, s, registry.Source{Files: []registry.File{siptest.SIP(1, "live", "active")}, Commit: "c1", Name: "t"}, time.Now()); err != nil {
		b.Fatal(err)
	}
	e, err := s.Entry(ctx, "live")
	if err != nil {
		b.Fatal(err)
	}
	var sessions, agents []string
	for i := range 200 {
		a, _, err := registry.NewAgent(fmt.Sprintf("floor-%d", i), "", time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := s.CreateAgent(ctx, a); err != nil {
			b.Fatal(err)
		}
		reg, _, err := s.Register(ctx, &evaluation.Registration{ID: registry.NewID("reg_"), AgentID: a.ID, EvaluationID: e.ID, VersionID: e.Current.ID, RegisteredAt: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
		sess, err := s.JoinLive(ctx, &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: e.ID, MinParticipants: 1, MaxParticipants: 2}, reg, time.Hour, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		sessions, agents = append(sessions, sess.ID), append(agents, a.ID)
	}
	const rate, seconds = 2000, 5
	for b.Loop() {
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		start := time.Now().Add(300 * time.Millisecond) // the schedule begins once every poster is waiting
		for k := range rate * seconds {
			i := k % len(sessions)
			at := start.Add(time.Duration(k) * time.Second / rate)
			wg.Go(func() {
				time.Sleep(time.Until(at))
				t0 := time.Now()
				if _, err := s.PostMessage(ctx, &evaluation.SessionMessage{ID: registry.NewID("msg_"), SessionID: sessions[i], SenderID: agents[i],
					Role: evaluation.RoleParticipant, Content: "x", CreatedAt: time.Now()}); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			})
		}
		wg.Wait()
		slices.Sort(lat)
		b.ReportMetric(float64(len(lat))/seconds, "posts/s")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
