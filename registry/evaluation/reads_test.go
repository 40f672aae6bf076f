package evaluation_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// newAgent registers an agent through the service.
func newAgent(t *testing.T, svc *evaluation.Service, name string) *registry.Agent {
	t.Helper()
	a, _, err := svc.RegisterAgent(t.Context(), name, "")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func setPublic(t *testing.T, svc *evaluation.Service, a *registry.Agent, public bool) {
	t.Helper()
	if _, err := svc.UpdateAgent(t.Context(), a.ID, registry.AgentUpdate{ResultsPublic: &public}); err != nil {
		t.Fatal(err)
	}
}

// TestVisibleResultAndRevoke: a result is found by its agent, and by
// anyone else only while its agent keeps results public; only its agent
// revokes it.
func TestVisibleResultAndRevoke(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	svc := listingWorld(t, st, listingT0)
	public, private, other := newAgent(t, svc, "public-one"), newAgent(t, svc, "private-one"), newAgent(t, svc, "other-one")
	setPublic(t, svc, private, false)
	results := map[string]string{}
	for _, a := range []*registry.Agent{public, private} {
		finish(t, st, svc, a.ID, "identity-check", true, listingT0)
		rs, _, err := svc.Results(t.Context(), evaluation.ResultFilter{AgentID: a.ID, Viewer: a.ID, Limit: 1})
		if err != nil || len(rs) != 1 {
			t.Fatalf("results of %s: %v %v", a.Name, rs, err)
		}
		results[a.Name] = rs[0].ID
	}
	for _, tt := range []struct {
		name, viewer, subject, want string
	}{
		{"anyone, public", "", "public-one", ""},
		{"another agent, public", other.ID, "public-one", ""},
		{"itself, public", public.ID, "public-one", ""},
		{"anyone, private", "", "private-one", "not_found"},
		{"another agent, private", other.ID, "private-one", "not_found"},
		{"itself, private", private.ID, "private-one", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, a, err := svc.VisibleResult(t.Context(), tt.viewer, results[tt.subject])
			if got := refusalCode(err); got != tt.want {
				t.Fatalf("VisibleResult: %q, want %q", got, tt.want)
			}
			if err == nil && (r.ID != results[tt.subject] || a.Name != tt.subject) {
				t.Errorf("got result %s of %s", r.ID, a.Name)
			}
		})
	}
	for _, tt := range []struct {
		name, agent, result, reason, want string
	}{
		{"another agent's", other.ID, results["public-one"], "", "not_found"},
		{"an unknown result", public.ID, "res_nope", "", "not_found"},
		{"a reason too long", public.ID, results["public-one"], strings.Repeat("r", 501), "validation_failed"},
		{"its own", public.ID, results["public-one"], "a mistake", ""},
	} {
		t.Run("revoke/"+tt.name, func(t *testing.T) {
			r, err := svc.RevokeResult(t.Context(), tt.agent, tt.result, tt.reason)
			if got := refusalCode(err); got != tt.want {
				t.Fatalf("RevokeResult: %q, want %q", got, tt.want)
			}
			if err == nil && (r.RevokedAt.IsZero() || r.RevokedReason != "revoked by its agent: a mistake") {
				t.Errorf("revoked %+v", r)
			}
		})
	}
}

// TestTranscriptAsViewersSeeIt: a session's transcript hides the name and
// messages of a participant who keeps results private from everyone but
// itself; posting needs an open session and a member.
func TestTranscriptAsViewersSeeIt(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	svc := listingWorld(t, st, listingT0)
	e, err := st.Entry(t.Context(), "open-live")
	if err != nil {
		t.Fatal(err)
	}
	open, shy, outsider := newAgent(t, svc, "open-voice"), newAgent(t, svc, "shy-voice"), newAgent(t, svc, "outsider")
	setPublic(t, svc, shy, false)
	var sessionID string
	for _, a := range []*registry.Agent{open, shy} {
		if _, _, err := svc.Register(t.Context(), a.ID, e); err != nil {
			t.Fatal(err)
		}
		started, err := svc.Start(t.Context(), a.ID, e)
		if err != nil {
			t.Fatal(err)
		}
		sessionID = started.Session.ID
	}
	for _, a := range []*registry.Agent{open, shy} {
		sess, role, err := svc.Member(t.Context(), a.ID, sessionID)
		if err != nil {
			t.Fatalf("member %s: %v", a.Name, err)
		}
		if _, err := svc.Post(t.Context(), sess, a.ID, role, "hello from "+a.Name); err != nil {
			t.Fatalf("post %s: %v", a.Name, err)
		}
	}
	if _, _, err := svc.Member(t.Context(), outsider.ID, sessionID); refusalCode(err) != "not_participant" {
		t.Errorf("an outsider is a member: %v", err)
	}
	if _, _, err := svc.Member(t.Context(), outsider.ID, "ses_nope"); refusalCode(err) != "not_found" {
		t.Errorf("an unknown session: %v", err)
	}
	for _, tt := range []struct {
		name, viewer string
		hidden       bool
	}{
		{"anyone", "", true},
		{"another agent", outsider.ID, true},
		{"the other participant", open.ID, true},
		{"the private participant itself", shy.ID, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := svc.Transcript(t.Context(), tt.viewer, sessionID, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Messages) != 2 || len(tr.Participants) != 2 || tr.More {
				t.Fatalf("transcript: %d messages, %d participants, more %v", len(tr.Messages), len(tr.Participants), tr.More)
			}
			for _, m := range tr.Messages {
				hidden := m.Content == evaluation.HiddenMessage
				if m.Content == "hello from open-voice" && hidden {
					t.Errorf("a public participant's message is hidden")
				}
				if (m.Content == "hello from shy-voice" || hidden) && hidden != tt.hidden {
					t.Errorf("the private participant's message: %q (sender %q), hidden %v", m.Content, m.SenderID, tt.hidden)
				}
				if hidden && m.SenderID != "" {
					t.Errorf("a hidden message names its sender %s", m.SenderID)
				}
			}
			for _, p := range tr.Participants {
				if p.Name == "shy-voice" && tt.hidden || p.Name == evaluation.PrivateName && !tt.hidden {
					t.Errorf("participant %+v, hidden %v", p, tt.hidden)
				}
			}
		})
	}
	if tr, err := svc.Transcript(t.Context(), "", sessionID, 0, 1); err != nil || len(tr.Messages) != 1 || !tr.More {
		t.Errorf("a page of one: %+v, %v", tr, err)
	}
}

// TestFeedbackIsTheAgentsAlone: a judged or proctored result's feedback
// (the judge's model, output, summary and per-item scores, a proctor's
// feedback) is shown to its agent and to nobody else, even while the agent
// keeps its results public; the rest of the result is shown as before.
func TestFeedbackIsTheAgentsAlone(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	svc := listingWorld(t, st, listingT0)
	ada, other := newAgent(t, svc, "judged-one"), newAgent(t, svc, "curious-one")
	// An evaluation that reveals scores (no points): feedback on a failed
	// attempt is kept for its agent; one that reveals pass or fail keeps
	// none, for anyone (TestAnonymousReadsOfAPassFailResult in api).
	e, err := st.Entry(t.Context(), "mc-practice")
	if err != nil {
		t.Fatal(err)
	}
	reg, _, err := svc.Register(t.Context(), ada.ID, e)
	if err != nil {
		t.Fatal(err)
	}
	details := map[string]any{"reason": "did not pass", "session_id": "ses_1", "judge_model": "m", "judge_raw": "raw output",
		"summary": "the judge's summary", "scores": []any{map[string]any{"prompt_id": "p1", "score": 3, "feedback": "too sure"}},
		"proctor_feedback": "quoted messages",
		// An imported SafeMolt result keeps SafeMolt's own record, where
		// its handlers wrote the proctor's feedback and the judge's output.
		"result_data": map[string]any{"proctor_feedback": "SafeMolt's proctor quoted messages"}}
	res := &evaluation.Result{ID: registry.NewID("res_"), RegistrationID: reg.ID, AgentID: ada.ID, EvaluationID: "mc-practice",
		VersionID: reg.VersionID, Version: reg.Version, Outcome: evaluation.OutcomeFailed, CompletedAt: listingT0, Details: details}
	if _, err := st.RecordResult(t.Context(), res, 0); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, viewer string
		feedback     bool
	}{
		{"anyone", "", false},
		{"another agent", other.ID, false},
		{"itself", ada.ID, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _, err := svc.VisibleResult(t.Context(), tt.viewer, res.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range append([]string{"result_data"}, evaluation.FeedbackDetails...) {
				if _, shown := r.Details[k]; shown != tt.feedback {
					t.Errorf("details[%s] shown %v, want %v", k, shown, tt.feedback)
				}
			}
			if r.Details["reason"] != "did not pass" || r.Details["session_id"] != "ses_1" {
				t.Errorf("the rest of the details: %v", r.Details)
			}
		})
	}
	// Showing it to others left the agent's own copy whole.
	if r, _, _ := svc.VisibleResult(t.Context(), ada.ID, res.ID); r.Details["judge_raw"] != "raw output" {
		t.Errorf("the agent's own details after others read them: %v", r.Details)
	}
}
