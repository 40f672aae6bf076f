package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/judge"
	"github.com/sipregistry/sip/registry/registrytest"
)

// slowJudge answers like a judge that thinks for delay per call.
type slowJudge struct {
	delay time.Duration
	judgeMode
}

func (j *slowJudge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(j.delay)
	j.judgeMode.ServeHTTP(w, r)
}

// BenchmarkCertificationJobs: ten certifications submitted at once and
// judged by one replica's worker (default settings) against a judge that
// takes 2 s per call, timed from the worker's start until every job has a
// result. The floor is the ten judge calls made at once, bare.
func BenchmarkCertificationJobs(b *testing.B) {
	const jobs, delay = 10, 2 * time.Second
	js := httptest.NewServer(&slowJudge{delay: delay, judgeMode: judgeMode{mode: "good"}})
	defer js.Close()
	client := &judge.Client{URL: js.URL, Model: "slow-judge"}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			s := backends[name](b)
			cert := versioned(42, "vcert", "agent_certification", "agent_certification_handler", "1.0.0", certificationConfig("p1", "p2"))
			if _, err := registry.Sync(b.Context(), s, registry.Source{Files: []registry.File{cert}, Commit: "c1", Name: "bench"}, time.Now()); err != nil {
				b.Fatal(err)
			}
			full := s.(registrytest.FullStore)
			svc := evaluation.New(evaluation.Config{Versions: full, Agents: full, Attempts: full, Challenges: full, Results: full, Revocations: full, Presented: full,
				Jobs: s.(jobStore), Judging: s.(jobStore), JudgeConfigured: true})
			round := 0
			for b.Loop() {
				round++
				submitCertifications(b, s, svc, jobs, fmt.Sprintf("%s-%d-%d", name, round, time.Now().UnixNano()%1e6))
				ctx, stop := context.WithCancel(b.Context())
				w := &evaluation.Worker{Service: svc, Judge: client}
				start := time.Now()
				done := make(chan struct{})
				go func() { defer close(done); w.Run(ctx) }()
				for {
					st, err := s.(jobStore).JobStats(b.Context())
					if err != nil {
						b.Fatal(err)
					}
					if st.Waiting == 0 && st.Judging == 0 {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				b.ReportMetric(time.Since(start).Seconds(), "s/10-jobs")
				stop()
				<-done
			}
		})
	}
	b.Run("floor", func(b *testing.B) {
		for b.Loop() {
			start := time.Now()
			var wg sync.WaitGroup
			for range jobs {
				wg.Go(func() {
					if _, err := client.Ask(b.Context(), []judge.Message{{Role: "user", Content: "## Item p1 score it"}}, []string{"p1"}); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
			b.ReportMetric(time.Since(start).Seconds(), "s/10-jobs")
		}
	})
}

// submitCertifications has n new agents start and submit vcert.
func submitCertifications(b *testing.B, s registry.Store, svc *evaluation.Service, n int, prefix string) {
	b.Helper()
	ctx := b.Context()
	e, err := s.Entry(ctx, "vcert")
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		a, _, err := registry.NewAgent(fmt.Sprintf("cert-%s-%d", prefix, i), "", time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if err := s.(registry.AgentStore).CreateAgent(ctx, a); err != nil {
			b.Fatal(err)
		}
		if _, _, err := svc.Register(ctx, a.ID, e); err != nil {
			b.Fatal(err)
		}
		st, err := svc.Start(ctx, a.ID, e)
		if err != nil {
			b.Fatal(err)
		}
		body := transcript(st.Job.Nonce, []string{"p1", "p2"}, func(string) string { return "I am not sure." })
		if _, err := svc.Submit(ctx, a.ID, e, func(v any) error { return json.Unmarshal([]byte(body), v) }); err != nil {
			b.Fatal(err)
		}
	}
}
