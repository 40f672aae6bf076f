package safemolt

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
)

// SafeMolt's sessions, their messages and its certification transcripts,
// mapped onto sip's sessions and jobs, so an imported result shows the
// transcript that produced it to whoever may see it, as a result graded
// here does: a session's conversation with the result (a participant who
// keeps results private shows as a private agent), a certification's
// prompts and responses to its agent alone.

// MapSession maps a SafeMolt session to an ended sip session with its
// proctor and candidate, or says why it is left out (ok false). SafeMolt's
// code opens only proctored sessions (a proctor and the candidate whose
// registration it grades); the candidate takes part through the
// registration of the registration's imported result.
func MapSession(ss *Session, versions Versions, now time.Time) (_ evaluation.ImportedSession, ok bool, problems []Problem) {
	problem := func(kind, msg string, skipped bool) {
		problems = append(problems, Problem{Kind: kind, Table: "evaluation_sessions", ID: ss.ID, Message: msg, Skipped: skipped})
	}
	if ss.Kind != string(evaluation.SessionProctored) {
		problem("unsupported_session", fmt.Sprintf("kind %q: SafeMolt opens only proctored sessions, and a session of another kind links no participant to a result", ss.Kind), true)
		return evaluation.ImportedSession{}, false, problems
	}
	if ss.StartedAt.After(now) {
		problem("future_session", "started_at "+ss.StartedAt.UTC().Format(time.RFC3339)+" is in the future", true)
		return evaluation.ImportedSession{}, false, problems
	}
	if ss.Result == nil {
		problem("session_without_result", fmt.Sprintf("its registration %q has no result: there is nothing to show its transcript with", ss.RegistrationID), true)
		return evaluation.ImportedSession{}, false, problems
	}
	ir, kept, _ := MapResult(ss.Result, versions, now)
	if !kept {
		problem("session_without_result", fmt.Sprintf("the result %q of its registration is not imported (see its own problem)", ss.Result.ID), true)
		return evaluation.ImportedSession{}, false, problems
	}
	ended := ss.EndedAt.UTC()
	if ss.Status != string(evaluation.SessionEnded) || ended.IsZero() || ended.After(now) {
		end := "no ended_at"
		if !ended.IsZero() {
			end = "ended_at " + ended.Format(time.RFC3339)
		}
		problem("open_session", fmt.Sprintf("status %q, %s: imported ended at its result's completion, as no message can be posted to it here", ss.Status, end), false)
		ended = ir.Result.CompletedAt
	}
	started := ss.StartedAt.UTC()
	if started.After(ended) {
		started = ended
	}
	out := evaluation.ImportedSession{SourceID: ss.ID, Session: evaluation.Session{
		ID: stableID("ses_", "session", ss.ID), EvaluationID: ir.Result.EvaluationID, Kind: evaluation.SessionProctored,
		Status: evaluation.SessionEnded, RegistrationID: ir.Registration.ID, MinParticipants: 1, MaxParticipants: 1, Participants: 1,
		CreatedAt: started, StartedAt: started, EndedAt: ended, VersionID: ir.Registration.VersionID,
	}}
	candidate := evaluation.Participant{AgentID: ir.Result.AgentID, Role: evaluation.RoleCandidate, RegistrationID: ir.Registration.ID, JoinedAt: started}
	seen := map[string]bool{ss.Result.AgentID: true}
	var proctors []evaluation.Participant
	for _, p := range ss.Participants {
		switch {
		case p.AgentID == ss.Result.AgentID:
			if !p.JoinedAt.IsZero() && !p.JoinedAt.After(ended) {
				candidate.JoinedAt = p.JoinedAt.UTC()
			}
		case !p.AgentFound:
			problem("orphaned_participant", fmt.Sprintf("its participant %q is not in agents: left out, with its messages", p.AgentID), false)
		case seen[p.AgentID]:
		case p.Role == evaluation.RoleProctor:
			joined := p.JoinedAt.UTC()
			if joined.IsZero() || joined.After(ended) {
				joined = started
			}
			proctors = append(proctors, evaluation.Participant{AgentID: stableID("agt_", "agent", p.AgentID), Role: evaluation.RoleProctor, JoinedAt: joined})
			seen[p.AgentID] = true
		default:
			problem("participant_without_result", fmt.Sprintf("the %s %q has no result of this session: left out, with its messages", p.Role, p.AgentID), false)
		}
	}
	out.Participants = append([]evaluation.Participant{candidate}, proctors...)
	if len(proctors) > 0 {
		out.Session.ProctorID = proctors[0].AgentID
	}
	return out, true, problems
}

// Numbering numbers each session's messages 1, 2, … in the order the
// source lists them (by session, sequence and id), so SafeMolt's gaps and
// duplicate sequences become one order, the same in every run.
type Numbering struct {
	session string
	n       int64
}

// Next is the number of the next message of session.
func (c *Numbering) Next(session string) int64 {
	if session != c.session {
		c.session, c.n = session, 0
	}
	c.n++
	return c.n
}

// MapMessage maps a SafeMolt message, numbered seq in its session, or
// says why it is left out (ok false). Whether its sender is a participant
// of the session as imported is for the store to see: a message without
// one is not written.
func MapMessage(m *Message, seq int64, now time.Time) (_ evaluation.ImportedMessage, ok bool, problems []Problem) {
	problem := func(kind, msg string, skipped bool) {
		problems = append(problems, Problem{Kind: kind, Table: "evaluation_messages", ID: m.ID, Message: msg, Skipped: skipped})
	}
	if !m.SessionFound {
		problem("orphaned_message", fmt.Sprintf("its session %q is not in evaluation_sessions", m.SessionID), true)
		return evaluation.ImportedMessage{}, false, problems
	}
	if m.CreatedAt.After(now) {
		problem("future_message", "created_at "+m.CreatedAt.UTC().Format(time.RFC3339)+" is in the future", true)
		return evaluation.ImportedMessage{}, false, problems
	}
	content, changed := cleanText(m.Content)
	if changed {
		problem("text_cleaned", "the content had invalid UTF-8 or control characters (NUL): they were replaced or removed", false)
	}
	if content, changed = clip(content, evaluation.MaxMessageSize); changed {
		problem("text_clipped", fmt.Sprintf("the content was longer than %d bytes: it was cut", evaluation.MaxMessageSize), false)
	}
	if content == "" {
		problem("empty_message", "the content is empty", true)
		return evaluation.ImportedMessage{}, false, problems
	}
	role, _ := cleanText(m.Role)
	return evaluation.ImportedMessage{SourceID: m.ID, Message: evaluation.SessionMessage{
		ID: stableID("msg_", "message", m.ID), SessionID: stableID("ses_", "session", m.SessionID), Sequence: seq,
		SenderID: stableID("agt_", "agent", m.SenderID), Role: role, Content: content, CreatedAt: m.CreatedAt.UTC(),
	}}, true, problems
}

// transcriptEntry is one entry of a certification transcript as sip
// keeps it (the shape of sip's own certification submissions, and what
// SafeMolt's entry held besides).
type transcriptEntry struct {
	PromptID  string `json:"prompt_id"`
	Prompt    string `json:"prompt,omitempty"`
	Response  string `json:"response"`
	Messages  any    `json:"messages,omitempty"`
	ToolCalls any    `json:"tool_calls,omitempty"`
}

// MapJob maps a SafeMolt certification job's transcript to the completed
// job of its result's registration, or says why it is left out (ok
// false). Only the registration's newest job is kept: a sip registration
// has one job, and the result's details name the newest's digest.
func MapJob(j *Job, versions Versions, now time.Time) (_ evaluation.ImportedTranscript, ok bool, problems []Problem) {
	problem := func(kind, msg string, skipped bool) {
		problems = append(problems, Problem{Kind: kind, Table: "certification_jobs", ID: j.ID, Message: msg, Skipped: skipped})
	}
	if j.Transcript == "" || j.Transcript == "null" {
		return evaluation.ImportedTranscript{}, false, nil // nothing was submitted
	}
	if !j.Newest {
		problem("superseded_transcript", fmt.Sprintf("a newer job of registration %q holds the transcript its result was judged on", j.RegistrationID), true)
		return evaluation.ImportedTranscript{}, false, problems
	}
	if j.Result == nil {
		problem("orphaned_transcript", fmt.Sprintf("its registration %q has no result", j.RegistrationID), true)
		return evaluation.ImportedTranscript{}, false, problems
	}
	ir, kept, _ := MapResult(j.Result, versions, now)
	if !kept {
		problem("orphaned_transcript", fmt.Sprintf("the result %q of its registration is not imported (see its own problem)", j.Result.ID), true)
		return evaluation.ImportedTranscript{}, false, problems
	}
	var raw []map[string]any
	if err := json.Unmarshal([]byte(j.Transcript), &raw); err != nil {
		problem("bad_transcript", "the transcript is not a JSON array of entries: left out", true)
		return evaluation.ImportedTranscript{}, false, problems
	}
	entries := make([]transcriptEntry, 0, len(raw))
	for _, e := range raw {
		e, _ = cleanJSON(e).(map[string]any)
		str := func(keys ...string) string {
			for _, k := range keys {
				if s, ok := e[k].(string); ok {
					return s
				}
			}
			return ""
		}
		entries = append(entries, transcriptEntry{PromptID: str("promptId", "prompt_id"), Prompt: str("prompt"), Response: str("response"),
			Messages: e["messages"], ToolCalls: firstNonNil(e["toolCalls"], e["tool_calls"])})
	}
	sub, err := json.Marshal(struct {
		Transcript []transcriptEntry `json:"transcript"`
	}{entries})
	if err != nil {
		problem("bad_transcript", "the transcript cannot be kept as JSON: left out", true)
		return evaluation.ImportedTranscript{}, false, problems
	}
	created := j.CreatedAt.UTC()
	if created.After(ir.Result.CompletedAt) {
		created = ir.Result.CompletedAt
	}
	return evaluation.ImportedTranscript{SourceID: j.ID, Job: evaluation.Job{
		ID: stableID("job_", "job", j.ID), RegistrationID: ir.Registration.ID, AgentID: ir.Result.AgentID, EvaluationID: ir.Result.EvaluationID,
		Status: evaluation.JobCompleted, Submission: sub, ResultID: ir.Result.ID, CreatedAt: created, UpdatedAt: ir.Result.CompletedAt,
	}}, true, problems
}

func firstNonNil(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}
