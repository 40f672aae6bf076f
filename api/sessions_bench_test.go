package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/registrytest"
)

// pairSIP is a live class work evaluation for two agents.
var pairSIP = registry.File{Path: "evaluations/SIP-1.md", Content: []byte(`---
sip: 1
id: pairs
name: Pairs
module: cooperation
type: live_class_work
status: active
author: Bench
created_at: 2026-11-22
updated_at: 2026-11-22
version: "1.0.0"
points: 1
config:
  min_participants: 2
  max_participants: 2
  duration_minutes: 600
  shared_grade: true
executable:
  handler: collaboration_handler
---

# Pairs

Two agents talk.
`)}

// BenchmarkMessageFanout: 100 sessions of two agents each; every agent
// listens to its session's SSE stream and posts 10 messages a second, open
// loop (each on its own schedule, so a slow answer cannot hide the posts
// behind it): 2,000 messages a second offered for 5 s. It reports the
// messages accepted per second, the p99 post latency, and the p99 time
// from a post to its delivery on the other agent's stream.
func BenchmarkMessageFanout(b *testing.B) {
	const sessions, d = 100, 5 * time.Second
	perAgent := 10 // messages per second per agent: 2,000 a second in all
	if v, err := strconv.Atoi(os.Getenv("SIP_BENCH_MSG_RATE")); err == nil && v > 0 {
		perAgent = v
	}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			s := backends[name](b)
			full := s.(registrytest.FullStore)
			ctx := b.Context()
			if _, err := registry.Sync(ctx, s, registry.Source{Files: []registry.File{pairSIP}, Commit: "c1", Name: "bench"}, time.Now()); err != nil {
				b.Fatal(err)
			}
			e, err := s.Entry(ctx, "pairs")
			if err != nil {
				b.Fatal(err)
			}
			type member struct{ key, session string }
			var members []member
			for i := range sessions * 2 {
				a, creds, err := registry.NewAgent(fmt.Sprintf("fan-%d", i), "", time.Now())
				if err != nil {
					b.Fatal(err)
				}
				if err := full.CreateAgent(ctx, a); err != nil {
					b.Fatal(err)
				}
				reg, _, err := full.Register(ctx, &evaluation.Registration{ID: registry.NewID("reg_"), AgentID: a.ID, EvaluationID: e.ID,
					VersionID: e.Current.ID, Version: e.Version, RegisteredAt: time.Now()})
				if err != nil {
					b.Fatal(err)
				}
				sess, err := s.(sessionStore).JoinLive(ctx, &evaluation.Session{ID: registry.NewID("ses_"), EvaluationID: e.ID,
					MinParticipants: 2, MaxParticipants: 2}, reg, 10*time.Hour, time.Now())
				if err != nil {
					b.Fatal(err)
				}
				members = append(members, member{creds.APIKey, sess.ID})
			}
			srv := httptest.NewServer(api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(s), Logger: slog.New(slog.DiscardHandler)}, runtimeStores{Agents: full, Evaluations: full, Jobs: s.(jobStore), Sessions: s.(sessionStore)})))
			defer srv.Close()
			tr := &http.Transport{MaxIdleConns: 1000, MaxIdleConnsPerHost: 1000}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			for b.Loop() {
				runCtx, cancel := context.WithCancel(ctx)
				var mu sync.Mutex
				var posts, deliveries []time.Duration
				var wg, ready sync.WaitGroup
				// Streams first: each agent hears the other's messages.
				for _, m := range members {
					ready.Add(1)
					wg.Go(func() {
						req, _ := http.NewRequestWithContext(runCtx, "GET", srv.URL+"/api/v1/evaluations/pairs/sessions/"+m.session+"/messages/stream", nil)
						req.Header.Set("Authorization", "Bearer "+m.key)
						resp, err := client.Do(req)
						if err != nil {
							ready.Done()
							return
						}
						defer resp.Body.Close()
						me := m.key[:12]
						sc := bufio.NewScanner(resp.Body)
						var local []time.Duration
						listening := false
						for sc.Scan() {
							line := sc.Text()
							if !listening && line == "event: session" {
								listening = true // the stream has read the session: it is live
								ready.Done()
							}
							if !strings.HasPrefix(line, "data: {\"id\":\"msg_") {
								continue
							}
							var msg struct{ Content string }
							json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &msg)
							from, sent, _ := strings.Cut(msg.Content, " ")
							if from == me {
								continue
							}
							ns, err := strconv.ParseInt(sent, 10, 64)
							if err != nil {
								continue // a warm-up message
							}
							local = append(local, time.Since(time.Unix(0, ns)))
						}
						if !listening {
							ready.Done()
						}
						mu.Lock()
						deliveries = append(deliveries, local...)
						mu.Unlock()
					})
				}
				ready.Wait()
				// Warm-up, not measured: one message from every agent, so
				// the database's backends have met these tables and the
				// client holds a connection per poster, as in steady state.
				var warm sync.WaitGroup
				for _, m := range members {
					warm.Go(func() {
						req, _ := http.NewRequest("POST", srv.URL+"/api/v1/evaluations/pairs/sessions/"+m.session+"/messages", strings.NewReader(`{"content":"warm-up"}`))
						req.Header.Set("Authorization", "Bearer "+m.key)
						req.Header.Set("Content-Type", "application/json")
						if resp, err := client.Do(req); err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					})
				}
				warm.Wait()
				start := time.Now().Add(300 * time.Millisecond) // the schedule begins once every poster is waiting
				var posters sync.WaitGroup
				for i, m := range members {
					me := m.key[:12]
					n := int(d.Seconds()) * perAgent
					offset := time.Duration(i) * time.Second / time.Duration(perAgent*len(members)) // spread the agents evenly
					for k := range n {
						at := start.Add(offset + time.Duration(k)*time.Second/time.Duration(perAgent))
						posters.Go(func() {
							time.Sleep(time.Until(at))
							body, _ := json.Marshal(map[string]string{"content": me + " " + strconv.FormatInt(time.Now().UnixNano(), 10)})
							req, _ := http.NewRequest("POST", srv.URL+"/api/v1/evaluations/pairs/sessions/"+m.session+"/messages", bytes.NewReader(body))
							req.Header.Set("Authorization", "Bearer "+m.key)
							req.Header.Set("Content-Type", "application/json")
							t0 := time.Now()
							resp, err := client.Do(req)
							if err != nil {
								b.Error(err)
								return
							}
							io.Copy(io.Discard, resp.Body) // to EOF, or the connection is not reused
							resp.Body.Close()
							if resp.StatusCode != 201 {
								b.Errorf("post: %d", resp.StatusCode)
								return
							}
							mu.Lock()
							posts = append(posts, time.Since(t0))
							mu.Unlock()
						})
					}
				}
				posters.Wait()
				time.Sleep(500 * time.Millisecond) // let the last deliveries arrive
				cancel()
				wg.Wait()
				slices.Sort(posts)
				slices.Sort(deliveries)
				if len(posts) == 0 || len(deliveries) == 0 {
					b.Fatalf("%d posts, %d deliveries", len(posts), len(deliveries))
				}
				b.ReportMetric(float64(len(posts))/d.Seconds(), "msgs/s")
				b.ReportMetric(float64(posts[len(posts)*99/100].Microseconds())/1000, "post-p99-ms")
				b.ReportMetric(float64(deliveries[len(deliveries)*99/100].Microseconds())/1000, "delivery-p99-ms")
				b.ReportMetric(float64(len(deliveries))/float64(len(posts)), "delivered/posted")
			}
		})
	}
}
