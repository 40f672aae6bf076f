package evaluation

import (
	"context"
	"time"

	"github.com/sipregistry/sip/registry"
)

// SessionKind says which kind of multi-agent evaluation a session runs
// (seed 001: one base model, two specialisations).
type SessionKind string

// Session kinds.
const (
	SessionProctored SessionKind = "proctored"
	SessionLive      SessionKind = "live_class_work"
)

// SessionStatus is where a session stands: forming (live class work,
// waiting for min_participants), active (messages flow), ended.
type SessionStatus string

// Session statuses.
const (
	SessionForming SessionStatus = "forming"
	SessionActive  SessionStatus = "active"
	SessionEnded   SessionStatus = "ended"
)

// Participant roles.
const (
	RoleProctor     = "proctor"
	RoleCandidate   = "candidate"
	RoleParticipant = "participant"
)

// MaxMessageSize caps one message's content.
const MaxMessageSize = 16 << 10

// Session is one run of a multi-agent evaluation: a hosted channel shared
// by its participants, kept as the transcript after it ends.
type Session struct {
	ID           string
	EvaluationID string
	Kind         SessionKind
	Status       SessionStatus
	// RegistrationID is the candidate's registration (proctored only).
	RegistrationID string
	// ProctorID is the agent who claimed the session to grade it.
	ProctorID       string
	MinParticipants int
	MaxParticipants int
	// Participants counts the graded participants (not the proctor).
	Participants int
	LastSequence int64
	CreatedAt    time.Time
	StartedAt    time.Time
	// EndsAt bounds a session (zero: no bound): messages stop then, and a
	// session its proctor has not graded GradingGrace after it ends with
	// not_graded results.
	EndsAt  time.Time
	EndedAt time.Time
	// VersionID is the SIP version whose registrations the session seats.
	VersionID int64
}

// Phase is the session's status as everyone sees it at now: the one
// "session ended" rule. An active session whose time is up has ended,
// though no proctor has graded it yet (its stored status changes then).
func (s *Session) Phase(now time.Time) SessionStatus {
	if s.Status == SessionActive && !s.EndsAt.IsZero() && !now.Before(s.EndsAt) {
		return SessionEnded
	}
	return s.Status
}

// Open reports whether messages may be posted at now: the session has
// started and not ended.
func (s *Session) Open(now time.Time) bool { return s.Phase(now) == SessionActive }

// Participant is an agent in a session, with its role.
type Participant struct {
	SessionID      string
	AgentID        string
	Name           string // filled when listing
	Role           string
	RegistrationID string // the graded participant's registration
	JoinedAt       time.Time
}

// SessionMessage is one message of a session's channel.
type SessionMessage struct {
	ID        string
	SessionID string
	Sequence  int64
	SenderID  string
	Role      string
	Content   string
	CreatedAt time.Time
}

// PendingRegistration is a proctored registration waiting for a proctor.
type PendingRegistration struct {
	RegistrationID string
	CandidateID    string
	CandidateName  string
	WaitingSince   time.Time
}

// SeatCheck rechecks who may claim or grade a session inside the store's
// transaction that records the claim or the grade, under the lock that
// joins take: the store reads the facts (Seats), Check decides.
type SeatCheck struct {
	// ProctorID is the proctor whose facts are read.
	ProctorID string
	// Qualification is the evaluation whose valid, unrevoked pass at Now
	// the store reports as Seats.Qualified ("" for none).
	Qualification string
	Now           time.Time
	Check         func(Seats) error
}

// Seats is what a store read for a SeatCheck.
type Seats struct {
	// ProctorOwner is the proctor's owner now.
	ProctorOwner string
	// Qualified says whether the proctor holds a valid pass of the
	// check's Qualification.
	Qualified bool
	// Seated are the session's agents other than its proctor seat (id and
	// owner), by id.
	Seated []registry.Agent
}

// SessionStore reads multi-agent sessions and their participants, and
// ends the ones nobody graded: what every part of the service that meets
// a session calls (the runners, the reads, the sweeper).
type SessionStore interface {
	// Session returns a session. Returns registry.ErrNotFound.
	Session(ctx context.Context, id string) (*Session, error)
	// SessionByRegistration returns the session a registration takes
	// part in. Returns registry.ErrNotFound.
	SessionByRegistration(ctx context.Context, registrationID string) (*Session, error)
	// Participants lists a session's participants with their names.
	Participants(ctx context.Context, sessionID string) ([]Participant, error)
	// OverdueSessions lists up to limit active sessions whose ends_at is
	// at or before before, oldest first.
	OverdueSessions(ctx context.Context, before time.Time, limit int) ([]*Session, error)
	// EndSession ends an active session that no proctor graded and records
	// results (not_graded) for its participants, in one transaction.
	// Returns registry.ErrConflict when the session is no longer active
	// (a grade got there first).
	EndSession(ctx context.Context, sessionID string, results []*Result, at time.Time) ([]*Result, error)
}

// MessageStore keeps sessions' messages and who may read and post them:
// membership, posting, the transcript and its streams. Implementations
// number a session's messages without gaps or duplicates.
type MessageStore interface {
	// Membership returns a session and the role agentID has in it (""
	// when none). Returns registry.ErrNotFound for an unknown session.
	Membership(ctx context.Context, sessionID, agentID string) (*Session, string, error)
	// AgentSessions lists the sessions an agent takes part in, newest
	// first, with its role in each.
	AgentSessions(ctx context.Context, agentID string) ([]*Session, []string, error)
	// PostMessage appends a message, numbering it after the session's
	// last one, if the session is open at m.CreatedAt. Returns
	// registry.ErrConflict when it is not.
	PostMessage(ctx context.Context, m *SessionMessage) (*SessionMessage, error)
	// Messages lists a session's messages after sequence since, in order,
	// at most limit.
	Messages(ctx context.Context, sessionID string, since int64, limit int) ([]*SessionMessage, error)
	// Subscribe follows a session's events: messages posted through this
	// process, and wake-ups for messages posted on other replicas (on
	// PostgreSQL, through LISTEN/NOTIFY) and for status changes.
	Subscribe(ctx context.Context, sessionID string) Subscription
}

// ProctorStore is what proctoring calls: the attempts waiting for a
// proctor, a proctor's claim of one, and grades. Implementations allow
// one claim per registration.
type ProctorStore interface {
	// PendingRegistrations lists registrations of an evaluation in status
	// (in_progress for proctored attempts, awaiting_grading for benchmark
	// answers a proctor grades) that have no session, oldest first, except
	// those of agent exclude.
	PendingRegistrations(ctx context.Context, evaluationID, exclude string, status RegistrationStatus) ([]PendingRegistration, error)
	// ClaimRegistration opens the proctored session of a registration
	// with its proctor and candidate. Returns registry.ErrConflict when the
	// registration has a session already.
	ClaimRegistration(ctx context.Context, s *Session, proctorID, candidateID string) (*Session, error)
	// GradeSession ends a session its proctor grades and records the
	// results (one per graded participant) in one transaction, crediting
	// points as RecordResult does. Returns registry.ErrConflict when proctorID did
	// not claim it or it was graded already.
	// check, when not nil, is run in that transaction after the lock that
	// joins take, on the seats as they are then; its error refuses the
	// grade.
	GradeSession(ctx context.Context, sessionID, proctorID string, results []*Result, points float64, at time.Time, check *SeatCheck) ([]*Result, error)
	// GradeJob ends the session in which a proctor graded a judging job
	// (a benchmark's free answers, when no judge is configured), records
	// the result and completes the job, in one transaction. Returns
	// registry.ErrConflict when proctorID did not claim the session, or the job is
	// no longer waiting for a grade.
	// check is as GradeSession's.
	GradeJob(ctx context.Context, sessionID, proctorID, jobID string, r *Result, points float64, at time.Time, check *SeatCheck) (*Result, error)
}

// SeatStore seats agents in live sessions and gives those sessions
// their proctor. Implementations serialise seats and claims in SQL.
type SeatStore interface {
	// JoinLive seats the registration in the oldest live session of its
	// evaluation and version with a free seat that has not ended and where
	// no one (participant or proctor) has the agent's owner, first come first
	// served, or opens a new one (template gives its evaluation, bounds
	// and duration); a session becomes active with ends_at when it
	// reaches its minimum. A registration already seated gets its
	// session back.
	JoinLive(ctx context.Context, template *Session, reg *Registration, duration time.Duration, at time.Time) (*Session, error)
	// LeaveForming takes a registration out of a forming session (when
	// it is cancelled). Returns registry.ErrConflict when its session has started.
	LeaveForming(ctx context.Context, registrationID string) error
	// UngradedSessions lists live sessions of an evaluation that started
	// and have no proctor, oldest first, except those exclude sits in.
	UngradedSessions(ctx context.Context, evaluationID, exclude string) ([]*Session, error)
	// ClaimSession makes proctorID the grader of a live session and a
	// participant with role proctor. Returns registry.ErrConflict when another
	// proctor claimed it, registry.ErrNotFound for an unknown session.
	// check, when not nil, is run in the claim's transaction after the
	// lock that joins take, on the seats as they are then; its error
	// refuses the claim.
	ClaimSession(ctx context.Context, sessionID, proctorID string, at time.Time, check *SeatCheck) (*Session, error)
}

// Subscription delivers a session's events to one stream.
type Subscription interface {
	// Wake receives a value when events wait.
	Wake() <-chan struct{}
	// Take returns the messages posted through this process since the
	// last Take, in the order they were published (which may differ from
	// their sequence), and whether the stream must read the session from
	// the database: messages posted elsewhere, a status change, or more
	// than it could hold.
	Take() ([]SessionMessage, bool)
	// Close ends the subscription.
	Close()
}
