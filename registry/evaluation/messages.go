package evaluation

import (
	"context"
	"errors"

	"github.com/sipregistry/sip/registry"
)

// Sessions and their messages, decided here for every door: who is a
// member (only participants and the proctor see a session), posting (the
// session must be open), and the transcript as a viewer may see it.

// HiddenMessage stands for a message of a participant who keeps results
// private, in a transcript shown to anyone else.
const HiddenMessage = "(a message of a participant who keeps results private)"

// Member finds the session and the agent's role in it; an agent that is
// not in it is refused.
func (s *Service) Member(ctx context.Context, agentID, sessionID string) (*Session, string, error) {
	sess, role, err := s.messages.Membership(ctx, sessionID, agentID)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, "", notFound("no such session", "List your sessions with GET /api/v1/agents/me/sessions.")
	}
	if err != nil {
		return nil, "", err
	}
	if role == "" {
		return sess, "", forbidden("not_participant", "only the session's participants can see it", "Join the evaluation, or claim it as its proctor.")
	}
	return sess, role, nil
}

// SessionWithParticipants is a session as its members see it.
func (s *Service) SessionWithParticipants(ctx context.Context, sessionID string) (*Session, []Participant, error) {
	sess, err := s.sessions.Session(ctx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	ps, err := s.sessions.Participants(ctx, sess.ID)
	return sess, ps, err
}

// AgentSessions lists the sessions the agent takes part in, newest first,
// with its role in each.
func (s *Service) AgentSessions(ctx context.Context, agentID string) ([]*Session, []string, error) {
	return s.messages.AgentSessions(ctx, agentID)
}

// CheckMessage refuses a message that is empty or too long.
func CheckMessage(content string) error {
	if content == "" {
		return invalid("content", "content is empty", "Send {\"content\": \"…\"}.")
	}
	if len(content) > MaxMessageSize {
		return tooLarge("content", "a message is at most 16 KiB", "Split it into several messages.")
	}
	return nil
}

// Post posts a message of a member (sess and role as Member found them)
// to a session: only while it is open, which the store checks in the
// statement that posts.
func (s *Service) Post(ctx context.Context, sess *Session, senderID, role, content string) (*SessionMessage, error) {
	if err := CheckMessage(content); err != nil {
		return nil, err
	}
	m, err := s.messages.PostMessage(ctx, &SessionMessage{ID: registry.NewID("msg_"), SessionID: sess.ID,
		SenderID: senderID, Role: role, Content: content, CreatedAt: s.now()})
	if errors.Is(err, registry.ErrConflict) {
		if sess.Status == SessionForming {
			return nil, conflict("session_not_started", "the session has not started: it is waiting for participants", "Wait until it is active.")
		}
		return nil, conflict("session_ended", "the session has ended", "Messages are kept as the transcript; no more can be posted.")
	}
	return m, err
}

// Messages reads a page of a session's messages after sequence since,
// for its members.
func (s *Service) Messages(ctx context.Context, sessionID string, since int64, limit int) ([]*SessionMessage, error) {
	return s.messages.Messages(ctx, sessionID, since, limit)
}

// Transcript is a session's messages as one viewer may see them.
type Transcript struct {
	// Participants, and the messages, of those the viewer may not see
	// (CanSee) carry no agent id, PrivateName and HiddenMessage.
	Participants []Participant
	Messages     []*SessionMessage
	// More says there are messages after the last one.
	More bool
}

// Transcript reads up to limit messages of a session after sequence
// since, as viewerID ("" for anyone) may see them.
func (s *Service) Transcript(ctx context.Context, viewerID, sessionID string, since int64, limit int) (*Transcript, error) {
	ms, err := s.messages.Messages(ctx, sessionID, since, limit+1)
	if err != nil {
		return nil, err
	}
	out := &Transcript{}
	if len(ms) > limit {
		ms, out.More = ms[:limit], true
	}
	ps, err := s.sessions.Participants(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	hidden := map[string]bool{}
	for _, p := range ps {
		if p.AgentID != viewerID { // an agent sees itself
			a, err := s.agents.AgentByID(ctx, p.AgentID)
			if err != nil {
				return nil, err
			}
			hidden[p.AgentID] = !registry.CanSee(viewerID, a, registry.SeeTranscript)
		}
		if hidden[p.AgentID] {
			p.AgentID, p.Name = "", PrivateName
		}
		out.Participants = append(out.Participants, p)
	}
	for _, m := range ms {
		if hidden[m.SenderID] {
			hm := *m
			hm.SenderID, hm.Content = "", HiddenMessage
			m = &hm
		}
		out.Messages = append(out.Messages, m)
	}
	return out, nil
}

// Subscribe wakes the caller when the session has news (a message, a
// change of status), for streams.
func (s *Service) Subscribe(ctx context.Context, sessionID string) Subscription {
	return s.messages.Subscribe(ctx, sessionID)
}

// Session reads a session as it is now.
func (s *Service) Session(ctx context.Context, sessionID string) (*Session, error) {
	return s.sessions.Session(ctx, sessionID)
}
