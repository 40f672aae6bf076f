package safemolt_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/safemolt"
)

// resultOf finds the imported result of a SafeMolt result by its source
// id in the agent's results.
func resultOf(t *testing.T, s target, agent *registry.Agent, eval, sourceID string) *evaluation.Result {
	t.Helper()
	rs, _, err := s.Results(t.Context(), evaluation.ResultFilter{AgentID: agent.ID, EvaluationID: eval, Viewer: agent.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Details["source_result_id"] == sourceID {
			return r
		}
	}
	t.Fatalf("no imported result of %s", sourceID)
	return nil
}

// TestImportSessionsAndTranscripts: SafeMolt's proctored sessions, their
// messages and its certification transcripts come along with their
// results, shown through the service as a transcript of a session or an
// attempt run here is (a conversation to anyone, hiding a participant who
// keeps results private; a certification's responses to its agent only);
// each trap is reported, and a second run writes nothing.
func TestImportSessionsAndTranscripts(t *testing.T) {
	t.Parallel()
	for name, open := range targets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := source(t)
			dst, _ := open(t)
			rep, err := run(t, src, dst, 3)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Written.Sessions != 2 || rep.Written.Messages != 5 || rep.Written.Transcripts != 1 || rep.Written.Unmatched != 3 {
				t.Errorf("written %+v, want 2 sessions, 5 messages, 1 transcript and 3 messages unmatched", rep.Written)
			}
			for kind, n := range map[string]int{"unsupported_session": 1, "future_session": 1, "session_without_result": 2, "open_session": 1,
				"orphaned_participant": 1, "orphaned_message": 1, "future_message": 1, "empty_message": 1, "superseded_transcript": 1,
				"orphaned_transcript": 1, "bad_transcript": 1} {
				if rep.ProblemCounts[kind] != n {
					t.Errorf("problems %s = %d, want %d", kind, rep.ProblemCounts[kind], n)
				}
			}
			svc := evaluation.New(evaluation.Config{Versions: dst, Agents: dst, Attempts: dst, Challenges: dst, Results: dst, Revocations: dst, Presented: dst, Jobs: dst, Judging: dst, Sessions: dst, Messages: dst, Proctoring: dst, Seats: dst, Now: func() time.Time { return now }})
			ada, bob := agentOf(t, dst, "Ada"), agentOf(t, dst, "bob")

			spam := resultOf(t, dst, ada, "non-spamminess", "res_ada_spam")
			sess, err := svc.SessionOf(t.Context(), spam.RegistrationID)
			if err != nil {
				t.Fatalf("the session of Ada's non-spamminess result: %v", err)
			}
			if sess.Status != evaluation.SessionEnded || sess.ProctorID != bob.ID || sess.LastSequence != 8 {
				t.Errorf("session = %+v, want ended, proctored by bob, last sequence 8", sess)
			}
			tr, err := svc.Transcript(t.Context(), "", sess.ID, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range tr.Messages {
				got = append(got, m.Content)
			}
			want := []string{"Tell me what you do.", "I read specifications.", "Only when asked.", "Thank you."}
			if !slices.Equal(got, want) {
				t.Errorf("transcript = %q, want %q (renumbered, cleaned, without the ghost's, the future's, the empty and the outsider's)", got, want)
			}
			if len(tr.Participants) != 2 {
				t.Errorf("participants = %+v, want the candidate and the proctor", tr.Participants)
			}

			// A participant who keeps results private shows as a private
			// agent, to anyone but itself.
			if _, err := dst.UpdateAgent(t.Context(), bob.ID, registry.AgentUpdate{ResultsPublic: new(false)}); err != nil {
				t.Fatal(err)
			}
			tr, err = svc.Transcript(t.Context(), "", sess.ID, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			if m := tr.Messages[0]; m.SenderID != "" || m.Content != evaluation.HiddenMessage {
				t.Errorf("bob's message to anyone = %+v, want hidden", m)
			}
			if tr, _ = svc.Transcript(t.Context(), bob.ID, sess.ID, 0, 100); tr.Messages[0].Content != "Tell me what you do." {
				t.Errorf("bob's message to bob = %+v, want shown", tr.Messages[0])
			}

			// The certification's transcript is its result's job's.
			cert := resultOf(t, dst, ada, "honest-uncertainty-certification", "res_ada_cert")
			job, err := svc.JobOf(t.Context(), cert.RegistrationID)
			if err != nil {
				t.Fatalf("the job of Ada's certification: %v", err)
			}
			var sub struct {
				Transcript []map[string]any `json:"transcript"`
			}
			if err := json.Unmarshal(job.Submission, &sub); err != nil || len(sub.Transcript) != 1 ||
				sub.Transcript[0]["prompt_id"] != "unknowable-fact" || sub.Transcript[0]["response"] != "Nobody can know that." {
				t.Errorf("the job's submission = %s (%v), want the newest job's transcript, cleaned", job.Submission, err)
			}
			if job.Status != evaluation.JobCompleted || job.ResultID != cert.ID {
				t.Errorf("job = %+v, want completed with the result", job)
			}

			again, err := run(t, src, dst, 3)
			if err != nil {
				t.Fatal(err)
			}
			if w := again.Written; w.Sessions != 0 || w.Messages != 0 || w.Transcripts != 0 || w.Unmatched != 3 {
				t.Errorf("second import wrote %+v, want nothing new (and the same 3 unmatched)", w)
			}
			if ms, _ := svc.Messages(t.Context(), sess.ID, 0, 100); len(ms) != 4 {
				t.Errorf("after a second import the session has %d messages, want 4", len(ms))
			}
		})
	}
}

// TestMapMessageCleansText: NUL bytes and invalid UTF-8 (which a SafeMolt
// database created as SQL_ASCII holds) are removed or replaced in
// messages and transcripts; a message left empty is skipped.
func TestMapMessageCleansText(t *testing.T) {
	for _, tc := range []struct {
		content, want string
		ok            bool
	}{
		{"be\x00fore", "before", true},
		{"ok \xff end", "ok \uFFFD end", true},
		{"\x00", "", false},
		{strings.Repeat("é", evaluation.MaxMessageSize), strings.Repeat("é", evaluation.MaxMessageSize/2), true},
	} {
		t.Run(fmt.Sprintf("%q", tc.content[:min(len(tc.content), 12)]), func(t *testing.T) {
			m := &safemolt.Message{ID: "m", SessionID: "s", SenderID: "a", Role: "candidate", Content: tc.content, CreatedAt: now.Add(-time.Hour), SessionFound: true}
			got, ok, _ := safemolt.MapMessage(m, 1, now)
			if ok != tc.ok || ok && got.Message.Content != tc.want {
				t.Errorf("MapMessage(%q) = %q, %v; want %q, %v", tc.content[:min(len(tc.content), 12)], got.Message.Content[:min(len(got.Message.Content), 12)], ok, tc.want[:min(len(tc.want), 12)], tc.ok)
			}
		})
	}
	job := &safemolt.Job{ID: "j", RegistrationID: "r", Newest: true, Transcript: `[{"promptId": "p\u0000", "response": "a\u0000b"}]`,
		Result: &safemolt.Result{ID: "res", RegistrationID: "r", AgentID: "a", EvaluationID: "poaw", AgentFound: true, CompletedAt: now.Add(-time.Hour), RegistrationFound: true}}
	versions := safemolt.NewVersions([]evaluation.VersionRef{{EvaluationID: "poaw", VersionID: 1, Version: "1.0.0", Current: true}})
	it, ok, _ := safemolt.MapJob(job, versions, now)
	if !ok || strings.Contains(string(it.Job.Submission), `\u0000`) || !strings.Contains(string(it.Job.Submission), `"response":"ab"`) {
		t.Errorf("MapJob = %s, %v; want the NUL bytes removed", it.Job.Submission, ok)
	}
}
