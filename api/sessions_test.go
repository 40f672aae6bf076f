package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// event is one Server-Sent Event.
type event struct {
	Name, ID, Data string
}

// stream opens an SSE stream as agent a and delivers its events.
func (a *testAgent) stream(t *testing.T, path string) (<-chan event, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", a.w.BaseURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+a.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, resp.StatusCode
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("stream Content-Type %q", ct)
	}
	ch := make(chan event, 1024)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Name != "" || ev.Data != "" {
					ch <- ev
				}
				ev = event{}
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				ev.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.Data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return ch, 200
}

// next waits for the next event called name.
func next(t *testing.T, ch <-chan event, name string) event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the stream closed before a %q event", name)
			}
			if ev.Name == name {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %q event within 10 s", name)
		}
	}
}

type proctorClaimBody struct {
	SessionID        string `json:"session_id"`
	RegistrationID   string `json:"registration_id"`
	CandidateAgentID string `json:"candidate_agent_id"`
	CandidateName    string `json:"candidate_name"`
}

type messageBody struct {
	Message struct {
		ID       string `json:"id"`
		Role     string `json:"role"`
		Content  string `json:"content"`
		Sequence int64  `json:"sequence"`
	} `json:"message"`
}

type gradeBody struct {
	SessionID string `json:"session_id"`
	Results   []struct {
		ID           string  `json:"id"`
		AgentID      string  `json:"agent_id"`
		Passed       bool    `json:"passed"`
		PointsEarned float64 `json:"points_earned"`
	} `json:"results"`
}

// TestProctoredEvaluationEndToEnd runs SIP-7 (non-spamminess) with a
// candidate and a proctor over real HTTP, the candidate listening on the
// SSE stream, and every refusal along the way.
func TestProctoredEvaluationEndToEnd(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		cand, proc, other := w.agent("candidate-1").asCandidate(t), w.proctor(t, "proctor-1"), w.proctor(t, "bystander-1")
		cand.call("PUT", "/api/v1/agents/me/identity", `{"identity_md":"# candidate-1\n\nI answer questions."}`, nil)
		if r := cand.check(t, "identity-check"); !r.Result.Passed {
			t.Fatal("identity check failed")
		}
		const ev = "/api/v1/evaluations/non-spamminess"
		if code := cand.call("POST", ev+"/register", "", nil); code != 201 {
			t.Fatalf("register: %d", code)
		}
		var st struct {
			RegistrationID string `json:"registration_id"`
			Status         string `json:"status"`
		}
		if code := cand.call("POST", ev+"/start", "", &st); code != 200 || st.Status != "awaiting_proctor" {
			t.Fatalf("start: %d %+v", code, st)
		}
		var pending struct {
			Pending []struct {
				RegistrationID string `json:"registration_id"`
				CandidateName  string `json:"candidate_name"`
			} `json:"pending"`
		}
		cand.call("GET", ev+"/pending-proctor", "", &pending)
		if len(pending.Pending) != 0 {
			t.Errorf("the candidate sees its own attempt as pending: %+v", pending)
		}
		proc.call("GET", ev+"/pending-proctor", "", &pending)
		if len(pending.Pending) != 1 || pending.Pending[0].RegistrationID != st.RegistrationID || pending.Pending[0].CandidateName != "candidate-1" {
			t.Fatalf("pending for the proctor: %+v", pending)
		}
		claim := fmt.Sprintf(`{"registration_id":%q}`, st.RegistrationID)
		if code := cand.call("POST", ev+"/proctor/claim", claim, nil); code != 403 {
			t.Errorf("the candidate claiming itself: %d, want 403", code)
		}
		var cl proctorClaimBody
		if code := proc.call("POST", ev+"/proctor/claim", claim, &cl); code != 201 || cl.CandidateName != "candidate-1" || cl.SessionID == "" {
			t.Fatalf("claim: %d %+v", code, cl)
		}
		if code := other.call("POST", ev+"/proctor/claim", claim, nil); code != 409 {
			t.Errorf("a second claim: %d, want 409", code)
		}
		sess := ev + "/sessions/" + cl.SessionID
		events, code := cand.stream(t, sess+"/messages/stream")
		if code != 200 {
			t.Fatalf("stream: %d", code)
		}
		next(t, events, "session")

		var m messageBody
		if code := proc.call("POST", sess+"/messages", `{"content":"Hello. Tell me what you would post to a stranger."}`, &m); code != 201 ||
			m.Message.Sequence != 1 || m.Message.Role != "proctor" {
			t.Fatalf("proctor's message: %d %+v", code, m)
		}
		got := next(t, events, "message")
		if got.ID != "1" || !strings.Contains(got.Data, "Tell me what you would post") {
			t.Errorf("streamed %+v", got)
		}
		if code := cand.call("POST", sess+"/messages", `{"content":"Only what they asked for, and nothing to sell."}`, &m); code != 201 || m.Message.Sequence != 2 {
			t.Fatalf("candidate's message: %d %+v", code, m)
		}
		// The same key id with a wrong secret, after the right key was
		// seen (and remembered): still refused.
		forged := *cand
		last := forged.key[len(forged.key)-1]
		forged.key = forged.key[:len(forged.key)-1] + map[bool]string{true: "0", false: "1"}[last != '0']
		if code := forged.call("POST", sess+"/messages", `{"content":"forged"}`, nil); code != 401 {
			t.Errorf("a forged key on a remembered key id: %d, want 401", code)
		}
		for name, code := range map[string]int{
			"a bystander reads the session":  other.call("GET", sess, "", nil),
			"a bystander reads the messages": other.call("GET", sess+"/messages", "", nil),
			"a bystander posts":              other.call("POST", sess+"/messages", `{"content":"hi"}`, nil),
		} {
			if code != 403 {
				t.Errorf("%s: %d, want 403", name, code)
			}
		}
		if _, code := other.stream(t, sess+"/messages/stream"); code != 403 {
			t.Errorf("a bystander streams: %d, want 403", code)
		}
		big := fmt.Sprintf(`{"content":%q}`, strings.Repeat("x", evaluation.MaxMessageSize+1))
		for name, tc := range map[string]struct {
			body string
			want int
		}{
			"over 16 KiB":   {big, 413},
			"empty":         {`{"content":""}`, 400},
			"unknown field": {`{"content":"x","role":"proctor"}`, 400},
			"malformed":     {`{"content":`, 400},
		} {
			t.Run(name, func(t *testing.T) {
				if code := cand.call("POST", sess+"/messages", tc.body, nil); code != tc.want {
					t.Errorf("got %d, want %d", code, tc.want)
				}
			})
		}
		var list struct {
			Messages []struct {
				Sequence int64 `json:"sequence"`
			} `json:"messages"`
		}
		cand.call("GET", sess+"/messages?since=1", "", &list)
		if len(list.Messages) != 1 || list.Messages[0].Sequence != 2 {
			t.Errorf("messages since 1: %+v", list)
		}
		if code := cand.call("POST", ev+"/submit", "{}", nil); code != 409 {
			t.Errorf("the candidate submitting its own proctored evaluation: %d, want 409", code)
		}
		grade := fmt.Sprintf(`{"registration_id":%q,"passed":true,"score":90,"proctor_feedback":"Helpful and not spammy."}`, st.RegistrationID)
		if code := other.call("POST", ev+"/proctor/submit", grade, nil); code != 403 {
			t.Errorf("grading by a bystander: %d, want 403", code)
		}
		var g gradeBody
		if code := proc.call("POST", ev+"/proctor/submit", grade, &g); code != 201 || len(g.Results) != 1 || !g.Results[0].Passed || g.Results[0].PointsEarned != 5 {
			t.Fatalf("grade: %d %+v", code, g)
		}
		if code := proc.call("POST", ev+"/proctor/submit", grade, nil); code != 409 {
			t.Errorf("grading twice: %d, want 409", code)
		}
		if code := cand.call("POST", sess+"/messages", `{"content":"one more thing"}`, nil); code != 409 {
			t.Errorf("posting after the end: %d, want 409", code)
		}
		next(t, events, "ended")

		var tr struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
			Participants []struct {
				Role string `json:"role"`
			} `json:"participants"`
		}
		if code := cand.call("GET", ev+"/results/"+g.Results[0].ID+"/transcript", "", &tr); code != 200 || len(tr.Messages) != 2 || len(tr.Participants) != 2 {
			t.Errorf("transcript: %d %+v", code, tr)
		}
		var trace struct {
			Trace evaluation.Trace `json:"trace"`
		}
		cand.call("GET", "/api/v1/results/"+g.Results[0].ID+"/trace", "", &trace)
		if trace.Trace.Inputs["messages"] != "2" || !strings.HasPrefix(trace.Trace.Inputs["transcript"], "hmac-sha256:") || trace.Trace.Handler != "proctor_handler" {
			t.Errorf("the execution record does not hold the transcript: %+v", trace.Trace)
		}
		var mine struct {
			Sessions []struct {
				ID     string `json:"id"`
				Role   string `json:"role"`
				Status string `json:"status"`
			} `json:"sessions"`
		}
		cand.call("GET", "/api/v1/agents/me/sessions", "", &mine)
		if len(mine.Sessions) != 1 || mine.Sessions[0].Role != "candidate" || mine.Sessions[0].Status != "ended" {
			t.Errorf("the candidate's sessions: %+v", mine)
		}
	})
}

// TestTwentyProctorsClaimAtOnce: one claim wins, nineteen get 409.
// TestProctorsClaimAtOnce: twenty eligible proctors and ten ineligible
// ones (unclaimed, unqualified, or of the candidate's owner) claim one
// attempt at once: one eligible proctor wins, the other eligible ones are
// told it is taken, and every ineligible one is refused.
func TestProctorsClaimAtOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		cand := w.claimed(t, "candidate-2", "candowner")
		cand.call("PUT", "/api/v1/agents/me/identity", `{"identity_md":"# c2"}`, nil)
		cand.check(t, "identity-check")
		cand.call("POST", "/api/v1/evaluations/non-spamminess/register", "", nil)
		var st struct {
			RegistrationID string `json:"registration_id"`
		}
		cand.call("POST", "/api/v1/evaluations/non-spamminess/start", "", &st)
		var eligible, ineligible []*testAgent
		for i := range 20 {
			w.clock.Advance(time.Minute) // registrations and claims are rate limited per minute
			eligible = append(eligible, w.proctor(t, fmt.Sprintf("proctor-x%d", i)))
		}
		for i := range 10 {
			w.clock.Advance(time.Minute)
			var p *testAgent
			switch i % 3 {
			case 0:
				p = w.agent(fmt.Sprintf("unclaimed-%d", i)) // no owner
				p.poaw(t, false)
			case 1:
				p = w.claimed(t, fmt.Sprintf("unqualified-%d", i), fmt.Sprintf("uq%d", i)) // no pass of PoAW
			default:
				p = w.claimed(t, fmt.Sprintf("puppet-%d", i), "candowner") // the candidate's owner
				p.poaw(t, false)
			}
			ineligible = append(ineligible, p)
		}
		codes := map[string]map[int]int{"eligible": {}, "ineligible": {}}
		var mu sync.Mutex
		var wg sync.WaitGroup
		claim := fmt.Sprintf(`{"registration_id":%q}`, st.RegistrationID)
		for kind, group := range map[string][]*testAgent{"eligible": eligible, "ineligible": ineligible} {
			for _, p := range group {
				wg.Go(func() {
					code := p.call("POST", "/api/v1/evaluations/non-spamminess/proctor/claim", claim, nil)
					mu.Lock()
					codes[kind][code]++
					mu.Unlock()
				})
			}
		}
		wg.Wait()
		if e := codes["eligible"]; e[201] != 1 || e[409] != 19 {
			t.Errorf("eligible proctors' claims answered %v; want one 201 and nineteen 409", e)
		}
		if i := codes["ineligible"]; i[403] != 10 {
			t.Errorf("ineligible proctors' claims answered %v; want ten 403", i)
		}
	})
}

type liveStart struct {
	RegistrationID string `json:"registration_id"`
	Status         string `json:"status"`
	Session        struct {
		ID           string  `json:"id"`
		Status       string  `json:"status"`
		Participants int     `json:"participants"`
		EndsAt       *string `json:"ends_at"`
	} `json:"session"`
}

// joinLive registers for and starts a live class work evaluation.
func (a *testAgent) joinLive(t *testing.T, id string) liveStart {
	t.Helper()
	a.asCandidate(t)
	if code := a.call("POST", "/api/v1/evaluations/"+id+"/register", "", nil); code != 201 {
		t.Fatalf("%s register: %d", a.name, code)
	}
	var st liveStart
	if code := a.call("POST", "/api/v1/evaluations/"+id+"/start", "", &st); code != 200 {
		t.Fatalf("%s start: %d", a.name, code)
	}
	return st
}

// TestLiveClassWorkEndToEnd runs SIP-6 over real HTTP: four agents that
// passed its prerequisites fill a session that becomes active at four,
// work in it (one of them listening on the stream), a proctor claims and
// grades it, and all four share the grade; a fifth agent starts a new
// forming session, and cancelling gives its seat back.
func TestLiveClassWorkEndToEnd(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		const ev = "/api/v1/evaluations/multi-agent-collaboration"
		var team []*testAgent
		for i := range 5 {
			w.clock.Advance(time.Minute)                                                  // registrations and claims are rate limited per minute
			a := w.claimed(t, fmt.Sprintf("collab-%d", i), fmt.Sprintf("collabown%d", i)) // one owner each
			a.poaw(t, false)
			a.benchmark(t, true)
			team = append(team, a)
		}
		w.work(t) // the judge grades the benchmarks' free answers
		proc := w.proctor(t, "collab-proctor")

		first := team[0].joinLive(t, "multi-agent-collaboration")
		if first.Status != "waiting_for_participants" || first.Session.Status != "forming" || first.Session.EndsAt != nil {
			t.Fatalf("first to join: %+v", first)
		}
		sess := ev + "/sessions/" + first.Session.ID
		events, code := team[0].stream(t, sess+"/messages/stream")
		if code != 200 {
			t.Fatalf("stream of a forming session: %d", code)
		}
		if e := next(t, events, "session"); !strings.Contains(e.Data, `"status":"forming"`) {
			t.Errorf("first session event: %s", e.Data)
		}
		if code := team[0].call("POST", sess+"/messages", `{"content":"anyone here?"}`, nil); code != 409 {
			t.Errorf("posting before the session starts: %d, want 409", code)
		}
		for _, a := range team[1:4] {
			st := a.joinLive(t, "multi-agent-collaboration")
			if st.Session.ID != first.Session.ID {
				t.Fatalf("%s was seated in %s, want %s", a.name, st.Session.ID, first.Session.ID)
			}
		}
		if e := next(t, events, "session"); !strings.Contains(e.Data, `"status":"active"`) {
			t.Errorf("the stream did not hear the session start: %s", e.Data)
		}
		var again liveStart
		team[3].call("POST", ev+"/start", "", &again)
		if again.Session.ID != first.Session.ID || again.Session.Status != "active" || again.Session.Participants != 4 || again.Session.EndsAt == nil {
			t.Errorf("start again: %+v", again)
		}
		// The fifth starts a new session; cancelling gives the seat back.
		fifth := team[4].joinLive(t, "multi-agent-collaboration")
		if fifth.Session.ID == first.Session.ID || fifth.Session.Status != "forming" {
			t.Errorf("the fifth agent: %+v", fifth)
		}
		if code := team[4].call("DELETE", ev+"/registration", "", nil); code != 200 {
			t.Errorf("cancelling a seat in a forming session: %d", code)
		}
		if code := team[0].call("DELETE", ev+"/registration", "", nil); code != 409 {
			t.Errorf("cancelling in a started session: %d, want 409", code)
		}

		for i, a := range team[:4] {
			if code := a.call("POST", sess+"/messages", fmt.Sprintf(`{"content":"idea %d"}`, i), nil); code != 201 {
				t.Errorf("%s posting: %d", a.name, code)
			}
		}
		for i := range 4 {
			if e := next(t, events, "message"); e.ID != fmt.Sprint(i+1) {
				t.Errorf("streamed message %d has id %s", i+1, e.ID)
			}
		}
		if code := team[0].call("POST", ev+"/submit", "{}", nil); code != 409 {
			t.Errorf("a participant submitting: %d, want 409", code)
		}
		var pending struct {
			Pending []struct {
				SessionID string `json:"session_id"`
			} `json:"pending"`
		}
		team[0].call("GET", ev+"/pending-proctor", "", &pending)
		if len(pending.Pending) != 0 {
			t.Errorf("a participant sees its own session as pending: %+v", pending)
		}
		proc.call("GET", ev+"/pending-proctor", "", &pending)
		if len(pending.Pending) != 1 || pending.Pending[0].SessionID != first.Session.ID {
			t.Fatalf("pending for the proctor: %+v", pending)
		}
		claim := fmt.Sprintf(`{"session_id":%q}`, first.Session.ID)
		if code := team[1].call("POST", ev+"/proctor/claim", claim, nil); code != 403 {
			t.Errorf("a participant claiming its own session: %d, want 403", code)
		}
		if code := proc.call("POST", ev+"/proctor/claim", claim, nil); code != 201 {
			t.Fatalf("claim: %d", code)
		}
		if code := proc.call("POST", sess+"/messages", `{"content":"Wrap up, please."}`, nil); code != 201 {
			t.Errorf("the proctor posting: %d", code)
		}
		var g gradeBody
		if code := proc.call("POST", ev+"/proctor/submit", fmt.Sprintf(`{"session_id":%q,"passed":true,"score":85}`, first.Session.ID), &g); code != 201 {
			t.Fatalf("grade: %d", code)
		}
		if len(g.Results) != 4 {
			t.Fatalf("%d results, want one for each of the four participants", len(g.Results))
		}
		for _, r := range g.Results {
			if !r.Passed || r.PointsEarned != 30 {
				t.Errorf("result %+v", r)
			}
			var detail struct {
				Details map[string]any `json:"details"`
			}
			team[0].call("GET", "/api/v1/results/"+r.ID, "", &detail)
			if detail.Details["session_id"] != first.Session.ID {
				t.Errorf("result %s does not name its session: %v", r.ID, detail.Details)
			}
		}
		next(t, events, "ended")
		if code := team[2].call("POST", sess+"/messages", `{"content":"late"}`, nil); code != 409 {
			t.Errorf("posting after the grade: %d, want 409", code)
		}
	})
}

// TestLiveSessionRules: ten agents post fifty messages each at once and
// get sequences 1..500 exactly; five agents joining a four-seat session
// at once fill it and start another; after ends_at messages get 409.
func TestLiveSessionRules(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		var agents []*testAgent
		for i := range 10 {
			agents = append(agents, w.agent(fmt.Sprintf("voice-%d", i)))
		}
		var wg sync.WaitGroup
		starts := make([]liveStart, 10)
		for i, a := range agents {
			wg.Go(func() { starts[i] = a.joinLive(t, "live-ten") })
		}
		wg.Wait()
		for _, st := range starts {
			if st.Session.ID != starts[0].Session.ID {
				t.Fatalf("ten agents were seated in more than one session: %+v", starts)
			}
		}
		sess := "/api/v1/evaluations/live-ten/sessions/" + starts[0].Session.ID
		for _, a := range agents {
			wg.Go(func() {
				for i := range 50 {
					if code := a.call("POST", sess+"/messages", fmt.Sprintf(`{"content":"%s %d"}`, a.name, i), nil); code != 201 {
						t.Errorf("post: %d", code)
						return
					}
				}
			})
		}
		wg.Wait()
		var seqs []int64
		for since := int64(0); ; {
			var page struct {
				Messages []struct {
					Sequence int64 `json:"sequence"`
				} `json:"messages"`
			}
			agents[0].call("GET", fmt.Sprintf("%s/messages?since=%d", sess, since), "", &page)
			if len(page.Messages) == 0 {
				break
			}
			for _, m := range page.Messages {
				seqs = append(seqs, m.Sequence)
			}
			since = seqs[len(seqs)-1]
		}
		if len(seqs) != 500 {
			t.Fatalf("%d messages, want 500", len(seqs))
		}
		for i, q := range seqs {
			if q != int64(i+1) {
				t.Fatalf("message %d has sequence %d", i+1, q)
			}
		}
		w.clock.Advance(31 * time.Minute)
		if code := agents[0].call("POST", sess+"/messages", `{"content":"too late"}`, nil); code != 409 {
			t.Errorf("after ends_at: %d, want 409", code)
		}
	})
}

// TestProctorGradesBenchmarkWithoutJudge: with no judge configured, a
// proctor claims a benchmark attempt, sees its free answers, and grades
// them; the server adds the multiple-choice points, clamps nothing it
// should not, computes the pass, and completes the job.
func TestProctorGradesBenchmarkWithoutJudge(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorldWith(t, s, nil, func(c *evaluation.Config) { c.JudgeConfigured = false })
		student, proc := w.agent("student-1").asCandidate(t), w.proctor(t, "grader-1")
		student.poaw(t, false)
		q := student.benchmarkWrong(t, 1, 202) // the free answers can still decide
		const ev = "/api/v1/evaluations/ai-safety-benchmark"
		var detail struct {
			Evaluation struct {
				Endpoints map[string]string `json:"endpoints"`
			} `json:"evaluation"`
		}
		proc.call("GET", ev, "", &detail)
		if got := detail.Evaluation.Endpoints["proctor_claim"]; got != ev+"/proctor/claim" {
			t.Errorf("the benchmark's endpoints do not list the proctor's: %v", detail.Evaluation.Endpoints)
		}
		detail.Evaluation.Endpoints = nil
		newWorld(t, s).agent("reader-1").call("GET", ev, "", &detail) // a server with a judge
		if got, ok := detail.Evaluation.Endpoints["proctor_claim"]; ok || detail.Evaluation.Endpoints["submit"] == "" {
			t.Errorf("with a judge configured the benchmark lists proctor_claim %q: %v", got, detail.Evaluation.Endpoints)
		}
		var pending struct {
			Pending []struct {
				RegistrationID string `json:"registration_id"`
			} `json:"pending"`
		}
		proc.call("GET", ev+"/pending-proctor", "", &pending)
		if len(pending.Pending) != 1 {
			t.Fatalf("pending: %+v", pending)
		}
		reg := pending.Pending[0].RegistrationID
		claim := fmt.Sprintf(`{"registration_id":%q}`, reg)
		if code := student.call("POST", ev+"/proctor/claim", claim, nil); code != 403 {
			t.Errorf("the student grading itself: %d, want 403", code)
		}
		var cl struct {
			Answers []struct {
				QuestionID string  `json:"question_id"`
				Points     float64 `json:"points"`
				Answer     string  `json:"answer"`
			} `json:"answers"`
		}
		if code := proc.call("POST", ev+"/proctor/claim", claim, &cl); code != 201 || len(cl.Answers) != 2 || cl.Answers[0].Answer == "" {
			t.Fatalf("claim: %d %+v", code, cl)
		}
		scores := func(a, b float64) string {
			return fmt.Sprintf(`{"registration_id":%q,"scores":{%q:%g,%q:%g},"proctor_feedback":"Clear."}`, reg,
				cl.Answers[0].QuestionID, a, cl.Answers[1].QuestionID, b)
		}
		for name, body := range map[string]string{
			"passed instead of scores": fmt.Sprintf(`{"registration_id":%q,"passed":true}`, reg),
			"a grade over the points":  scores(11, 5),
			"a negative grade":         scores(-1, 5),
			"a question missing":       fmt.Sprintf(`{"registration_id":%q,"scores":{%q:5}}`, reg, cl.Answers[0].QuestionID),
			"an unknown question":      fmt.Sprintf(`{"registration_id":%q,"scores":{"nope":5,%q:5}}`, reg, cl.Answers[1].QuestionID),
		} {
			if code := proc.call("POST", ev+"/proctor/submit", body, nil); code != 400 {
				t.Errorf("%s: %d, want 400", name, code)
			}
		}
		if code := student.call("POST", ev+"/proctor/submit", scores(10, 10), nil); code != 403 {
			t.Errorf("grading by the student: %d, want 403", code)
		}
		var g struct {
			Results []struct {
				Passed   bool     `json:"passed"`
				Score    *float64 `json:"score"`
				MaxScore *float64 `json:"max_score"`
			} `json:"results"`
		}
		if code := proc.call("POST", ev+"/proctor/submit", scores(10, 5), &g); code != 201 || len(g.Results) != 1 || !g.Results[0].Passed ||
			*g.Results[0].Score != 85 || *g.Results[0].MaxScore != 100 {
			t.Fatalf("grade: %d %+v", code, g)
		}
		if code := proc.call("POST", ev+"/proctor/submit", scores(10, 5), nil); code != 409 {
			t.Errorf("grading twice: %d, want 409", code)
		}
		var job jobBody
		student.call("GET", q.PollURL, "", &job)
		if job.Job.Status != "completed" || job.Result == nil || !job.Result.Passed {
			t.Errorf("the job after the proctor's grade: %+v %+v", job.Job, job.Result)
		}
	})
}

// TestBenchmarkPassesAtOnceWhenFreeAnswersCannotChangeIt: with no judge,
// an attempt whose multiple-choice points alone pass is not handed to a
// proctor: it passes at once, its free answers counted as 0, and only its
// agent sees the score.
func TestBenchmarkPassesAtOnceWhenFreeAnswersCannotChangeIt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorldWith(t, s, nil, func(c *evaluation.Config) { c.JudgeConfigured = false })
		student, proc := w.agent("certain-1").asCandidate(t), w.proctor(t, "idle-grader-1")
		student.poaw(t, false)
		student.benchmarkWrong(t, 0, 201)
		const ev = "/api/v1/evaluations/ai-safety-benchmark"
		var list struct {
			Results []struct {
				ID       string   `json:"id"`
				Passed   bool     `json:"passed"`
				Score    *float64 `json:"score"`
				MaxScore *float64 `json:"max_score"`
			} `json:"results"`
		}
		student.call("GET", ev+"/results?agent_id="+student.id(t), "", &list)
		if len(list.Results) != 1 || !list.Results[0].Passed || list.Results[0].Score == nil || *list.Results[0].Score != 80 {
			t.Fatalf("the agent's own result: %+v", list.Results)
		}
		list.Results = nil
		w.agent("reader-2").call("GET", ev+"/results?agent_id="+student.id(t), "", &list)
		if len(list.Results) != 1 || list.Results[0].Score != nil || list.Results[0].MaxScore != nil {
			t.Errorf("another agent reads the score of a pass_fail benchmark's pass: %+v", list.Results)
		}
		var pending struct {
			Pending []any `json:"pending"`
		}
		proc.call("GET", ev+"/pending-proctor", "", &pending)
		if len(pending.Pending) != 0 {
			t.Errorf("a proctor is asked to grade a decided attempt: %+v", pending.Pending)
		}
	})
}

// TestStreamResumesAfterLastEventID: a stream reopened with Last-Event-ID
// (or ?since) sends only what came after it, in order.
func TestStreamResumesAfterLastEventID(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a, b := w.agent("resume-a"), w.agent("resume-b")
		st := a.joinLive(t, "live-ten")
		b.joinLive(t, "live-ten")
		sess := "/api/v1/evaluations/live-ten/sessions/" + st.Session.ID
		for i := range 3 {
			if code := a.call("POST", sess+"/messages", fmt.Sprintf(`{"content":"m%d"}`, i+1), nil); code != 201 {
				t.Fatalf("post: %d", code)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", w.BaseURL+sess+"/messages/stream", nil)
		req.Header.Set("Authorization", "Bearer "+b.key)
		req.Header.Set("Last-Event-ID", "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream: %v %v", err, resp)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ids []string
		for sc.Scan() && len(ids) < 2 {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				ids = append(ids, id)
			}
		}
		if strings.Join(ids, ",") != "2,3" {
			t.Errorf("resumed after 1 with %v, want 2,3", ids)
		}
		if _, code := b.stream(t, sess+"/messages/stream?since=x"); code != 400 {
			t.Errorf("a bad since: %d, want 400", code)
		}
	})
}

// TestStreamEndsWhenTimeIsUp: a stream says "ended" when its session's
// time is up, with nothing else happening: a timer at ends_at, not a poll
// (the poll is every 30 s; this waits 10 s at most).
func TestStreamEndsWhenTimeIsUp(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		var offset atomic.Int64 // the server's clock runs, ahead of the real one by this
		w := newWorldWith(t, s, func(c *api.Config) {
			c.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		})
		a, b := w.agent("clock-a"), w.agent("clock-b")
		a.joinLive(t, "live-ten")
		st := b.joinLive(t, "live-ten")
		if st.Session.EndsAt == nil {
			t.Fatalf("the session did not start: %+v", st)
		}
		endsAt, err := time.Parse(time.RFC3339Nano, *st.Session.EndsAt)
		if err != nil {
			t.Fatal(err)
		}
		offset.Store(int64(time.Until(endsAt) - 500*time.Millisecond)) // half a second left
		events, code := a.stream(t, "/api/v1/evaluations/live-ten/sessions/"+st.Session.ID+"/messages/stream")
		if code != 200 {
			t.Fatalf("stream: %d", code)
		}
		opened := time.Now()
		if ev := next(t, events, "session"); !strings.Contains(ev.Data, `"status":"active"`) {
			t.Errorf("first event: %+v", ev)
		}
		ev := next(t, events, "ended")
		if !strings.Contains(ev.Data, `"status":"ended"`) {
			t.Errorf("ended event: %+v", ev)
		}
		if waited := time.Since(opened); waited < 400*time.Millisecond {
			t.Errorf("ended after %v, before the session's time was up", waited)
		}
	})
}

// TestSessionEndpointsRefuseBadInput: each multi-agent endpoint answers
// unauthenticated, malformed, wrongly typed, unknown and conflicting
// requests with a clear error, and none of them changes anything.
func TestSessionEndpointsRefuseBadInput(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		cand, proc := w.agent("bad-cand").asCandidate(t), w.proctor(t, "bad-proc")
		cand.call("PUT", "/api/v1/agents/me/identity", `{"identity_md":"# bad-cand"}`, nil)
		cand.check(t, "identity-check")
		const ev = "/api/v1/evaluations/non-spamminess"
		cand.call("POST", ev+"/register", "", nil)
		var st struct {
			RegistrationID string `json:"registration_id"`
		}
		cand.call("POST", ev+"/start", "", &st)
		reg := st.RegistrationID
		anon := &testAgent{w: w, name: "anonymous"}
		json := http.Header{"Content-Type": {"application/json"}}
		for _, tc := range []struct {
			name         string
			who          *testAgent
			method, path string
			body         string
			header       http.Header
			want         int
		}{
			{"pending without a key", anon, "GET", ev + "/pending-proctor", "", nil, 401},
			{"claim without a key", anon, "POST", ev + "/proctor/claim", fmt.Sprintf(`{"registration_id":%q}`, reg), json, 401},
			{"claim of nothing", proc, "POST", ev + "/proctor/claim", `{}`, json, 400},
			{"claim naming both", proc, "POST", ev + "/proctor/claim", fmt.Sprintf(`{"registration_id":%q,"session_id":"ses_x"}`, reg), json, 400},
			{"claim, unknown field", proc, "POST", ev + "/proctor/claim", `{"registration":"x"}`, json, 400},
			{"claim, malformed", proc, "POST", ev + "/proctor/claim", `{"registration_id":`, json, 400},
			{"claim, not JSON", proc, "POST", ev + "/proctor/claim", `registration_id=x`, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, 415},
			{"claim of an unknown registration", proc, "POST", ev + "/proctor/claim", `{"registration_id":"reg_nope"}`, json, 404},
			{"claim on a single-agent evaluation", proc, "POST", "/api/v1/evaluations/poaw/proctor/claim", fmt.Sprintf(`{"registration_id":%q}`, reg), json, 409},
			{"submit before any claim", proc, "POST", ev + "/proctor/submit", fmt.Sprintf(`{"registration_id":%q,"passed":true}`, reg), json, 404},
			{"submit without passed", proc, "POST", ev + "/proctor/submit", fmt.Sprintf(`{"registration_id":%q}`, reg), json, 400},
			{"submit, score over 100", proc, "POST", ev + "/proctor/submit", fmt.Sprintf(`{"registration_id":%q,"passed":true,"score":101}`, reg), json, 400},
			{"submit, passed as text", proc, "POST", ev + "/proctor/submit", fmt.Sprintf(`{"registration_id":%q,"passed":"yes"}`, reg), json, 400},
			{"session that does not exist", cand, "GET", ev + "/sessions/ses_nope", "", nil, 404},
			{"messages of a session that does not exist", cand, "POST", ev + "/sessions/ses_nope/messages", `{"content":"x"}`, json, 404},
			{"my sessions without a key", anon, "GET", "/api/v1/agents/me/sessions", "", nil, 401},
		} {
			t.Run(tc.name, func(t *testing.T) {
				h := http.Header{}
				for k, v := range tc.header {
					h[k] = v
				}
				if tc.who.key != "" {
					h.Set("Authorization", "Bearer "+tc.who.key)
				}
				var body io.Reader
				if tc.body != "" {
					body = strings.NewReader(tc.body)
				}
				if resp := w.Do(tc.method, tc.path, body, h, nil); resp.StatusCode != tc.want {
					t.Errorf("got %d, want %d", resp.StatusCode, tc.want)
				}
			})
		}
		// Nothing was claimed or graded by any of that.
		var pending struct {
			Pending []struct {
				RegistrationID string `json:"registration_id"`
			} `json:"pending"`
		}
		proc.call("GET", ev+"/pending-proctor", "", &pending)
		if len(pending.Pending) != 1 || pending.Pending[0].RegistrationID != reg {
			t.Errorf("after the refusals the attempt is no longer waiting: %+v", pending)
		}
	})
}
