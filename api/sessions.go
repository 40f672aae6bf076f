package api

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/ratelimit"
)

type sessionView struct {
	ID           string `json:"id"`
	EvaluationID string `json:"evaluation_id"`
	Kind         string `json:"kind"`
	Status       string `json:"status"`
	// ParticipantCount is the name; Participants, the same number, is
	// kept for clients written before (deprecated: it reads like the
	// participants list that session responses carry beside it).
	ParticipantCount int     `json:"participant_count"`
	Participants     int     `json:"participants"`
	MinParticipants  int     `json:"min_participants"`
	MaxParticipants  int     `json:"max_participants"`
	StartedAt        *string `json:"started_at"`
	EndsAt           *string `json:"ends_at"`
	EndedAt          *string `json:"ended_at"`
}

func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := timestamp(t)
	return &s
}

func toSession(s *evaluation.Session, now time.Time) sessionView {
	status := string(s.Phase(now))
	return sessionView{ID: s.ID, EvaluationID: s.EvaluationID, Kind: string(s.Kind), Status: status, ParticipantCount: s.Participants, Participants: s.Participants,
		MinParticipants: s.MinParticipants, MaxParticipants: s.MaxParticipants, StartedAt: optTime(s.StartedAt), EndsAt: optTime(s.EndsAt),
		EndedAt: optTime(s.EndedAt)}
}

type messageView struct {
	ID            string `json:"id"`
	SenderAgentID string `json:"sender_agent_id"`
	Role          string `json:"role"`
	Content       string `json:"content"`
	Sequence      int64  `json:"sequence"`
	CreatedAt     string `json:"created_at"`
}

func toMessage(m *evaluation.SessionMessage) messageView {
	return messageView{m.ID, m.SenderID, m.Role, m.Content, m.Sequence, timestamp(m.CreatedAt)}
}

func forbidden(code, msg, hint string) *Error {
	return &Error{Status: http.StatusForbidden, Code: code, Message: msg, Hint: hint}
}

// sessionOf finds the path's session of the path's evaluation and the
// caller's role in it: only participants may see a session. It costs one
// query when the path names the evaluation by id (as the API's own links
// do).
func (s *Server) sessionOf(c echo.Context, a *registry.Agent) (*evaluation.Session, string, error) {
	ctx := c.Request().Context()
	if m, ok := s.members.get(c.Param("session"), a.ID); ok && c.Param("ref") == m.evaluationID {
		return &evaluation.Session{ID: c.Param("session"), EvaluationID: m.evaluationID, Status: evaluation.SessionActive}, m.role, nil
	}
	sess, role, err := s.runtime.Member(ctx, a.ID, c.Param("session"))
	missing := notFound("no such session", "List your sessions with GET /api/v1/agents/me/sessions.")
	if sess == nil {
		return nil, "", err
	}
	if ref := c.Param("ref"); ref != sess.EvaluationID {
		_, e, err := s.pathEvaluation(c)
		if err != nil {
			return nil, "", err
		}
		if e.ID != sess.EvaluationID {
			return nil, "", missing
		}
	}
	if err != nil {
		return nil, "", err // not a participant
	}
	if sess.Status == evaluation.SessionActive {
		s.members.put(sess.ID, a.ID, membership{sess.EvaluationID, role})
	}
	return sess, role, nil
}

// membership is an agent's place in a started session. It never changes
// (a participant leaves only a forming session), so the server remembers
// it and spares the busiest endpoints, posting and streaming, a query.
// What may change, the session's status, is checked by the statements
// that depend on it.
type membership struct {
	evaluationID, role string
}

type memberCache struct {
	mu sync.Mutex
	m  map[[2]string]membership
}

const maxMembers = 100_000

func (c *memberCache) get(session, agent string) (membership, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.m[[2]string{session, agent}]
	return m, ok
}

func (c *memberCache) put(session, agent string, m membership) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxMembers {
		c.m = map[[2]string]membership{}
	}
	c.m[[2]string{session, agent}] = m
}

type participantView struct {
	AgentID string `json:"agent_id"`
	Name    string `json:"name"`
	Role    string `json:"role"`
}

// getSession answers GET /api/v1/evaluations/{ref}/sessions/{session}.
func (s *Server) getSession(c echo.Context, a *registry.Agent) error {
	ref, _, err := s.sessionOf(c, a)
	if err != nil {
		return err
	}
	sess, ps, err := s.runtime.SessionWithParticipants(c.Request().Context(), ref.ID) // sessionOf may answer from memory
	if err != nil {
		return err
	}
	views := make([]participantView, 0, len(ps))
	for _, p := range ps {
		views = append(views, participantView{p.AgentID, p.Name, p.Role})
	}
	return c.JSON(http.StatusOK, struct {
		Success      bool              `json:"success"`
		Session      sessionView       `json:"session"`
		Participants []participantView `json:"participants"`
	}{true, toSession(sess, s.now()), views})
}

// Message limits: an agent posts at most 10 messages a second (bursts of
// 60), a session takes at most 50 a second (bursts of 600), so one agent
// cannot flood a session or the server.
var (
	agentPosts   = Limit{"agent-posts", 600, 60}
	sessionPosts = Limit{"session-posts", 3000, 600}
)

// postMessage answers POST …/sessions/{session}/messages.
func (s *Server) postMessage(c echo.Context, a *registry.Agent) error {
	var body struct {
		Content string `json:"content"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	if err := evaluation.CheckMessage(body.Content); err != nil {
		return err
	}
	sess, role, err := s.sessionOf(c, a)
	if err != nil {
		return err
	}
	for _, l := range []struct {
		lim Limit
		key string
		who string
	}{{agentPosts, a.ID, "you post"}, {sessionPosts, sess.ID, "this session takes"}} {
		ok, wait, err := s.limiter.Allow(c.Request().Context(), ratelimit.Limit(l.lim), l.key)
		if err != nil {
			return err
		}
		if !ok {
			secs := retryAfter(wait)
			c.Response().Header().Set("Retry-After", secs)
			return &Error{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: "too many messages: " + l.who + " more than the limit",
				Hint: "Wait " + secs + " seconds and try again."}
		}
	}
	m, err := s.runtime.Post(c.Request().Context(), sess, a.ID, role, body.Content)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, struct {
		Success bool        `json:"success"`
		Message messageView `json:"message"`
	}{true, toMessage(m)})
}

// sinceParam reads ?since=SEQ (0 when absent).
func sinceParam(c echo.Context) (int64, error) {
	v := c.QueryParam("since")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("since", "since must be a message sequence number (0 or more)", "Pass the sequence of the last message you have.")
	}
	return n, nil
}

// listMessages answers GET …/sessions/{session}/messages?since=SEQ.
func (s *Server) listMessages(c echo.Context, a *registry.Agent) error {
	since, err := sinceParam(c)
	if err != nil {
		return err
	}
	limit, err := messageLimit(c)
	if err != nil {
		return err
	}
	sess, _, err := s.sessionOf(c, a)
	if err != nil {
		return err
	}
	ms, err := s.runtime.Messages(c.Request().Context(), sess.ID, since, limit)
	if err != nil {
		return err
	}
	views := make([]messageView, 0, len(ms))
	for _, m := range ms {
		views = append(views, toMessage(m))
	}
	return c.JSON(http.StatusOK, struct {
		Success  bool          `json:"success"`
		Messages []messageView `json:"messages"`
	}{true, views})
}

// mySessions answers GET /api/v1/agents/me/sessions.
func (s *Server) mySessions(c echo.Context, a *registry.Agent) error {
	sessions, roles, err := s.runtime.AgentSessions(c.Request().Context(), a.ID)
	if err != nil {
		return err
	}
	type item struct {
		sessionView
		Role string `json:"role"`
	}
	out := make([]item, 0, len(sessions))
	for i, sess := range sessions {
		out = append(out, item{toSession(sess, s.now()), roles[i]})
	}
	return c.JSON(http.StatusOK, struct {
		Success  bool   `json:"success"`
		Sessions []item `json:"sessions"`
	}{true, out})
}

// sessionTranscript answers the transcript of a result that a session
// produced: its messages, in order, with the session and participants.
func (s *Server) sessionTranscript(c echo.Context, r *evaluation.Result, sess *evaluation.Session) error {
	ctx := c.Request().Context()
	v, err := s.viewer(c)
	if err != nil {
		return err
	}
	// Pages of at most 200 messages: a long session downloaded by many
	// clients at once costs each request one page of memory.
	since, err := sinceParam(c)
	if err != nil {
		return err
	}
	limit, err := messageLimit(c)
	if err != nil {
		return err
	}
	tr, err := s.runtime.Transcript(ctx, viewerID(v), sess.ID, since, limit)
	if err != nil {
		return err
	}
	var next *int64
	if tr.More {
		n := tr.Messages[len(tr.Messages)-1].Sequence
		next = &n
	}
	messages := make([]messageView, 0, len(tr.Messages))
	for _, m := range tr.Messages {
		messages = append(messages, toMessage(m))
	}
	participants := make([]participantView, 0, len(tr.Participants))
	for _, p := range tr.Participants {
		participants = append(participants, participantView{p.AgentID, p.Name, p.Role})
	}
	return c.JSON(http.StatusOK, struct {
		Success      bool              `json:"success"`
		ResultID     string            `json:"result_id"`
		Session      sessionView       `json:"session"`
		Participants []participantView `json:"participants"`
		Messages     []messageView     `json:"messages"`
		NextSince    *int64            `json:"next_since,omitempty"`
	}{true, r.ID, toSession(sess, s.now()), participants, messages, next})
}

// messageLimit reads ?limit= for pages of messages: 1 to 200, 200 when
// absent.
func messageLimit(c echo.Context) (int, error) {
	limit := registry.MaxPageSize
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > registry.MaxPageSize {
			return 0, badRequest("limit", "limit must be a number from 1 to 200", "Leave it out for 200.")
		}
		limit = n
	}
	return limit, nil
}
