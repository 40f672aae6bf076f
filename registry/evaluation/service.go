package evaluation

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/sipregistry/sip/registry"
)

// agentReader is what the service needs of agents.
type agentReader interface {
	AgentByID(ctx context.Context, id string) (*registry.Agent, error)
}

// Config is what a Service is built from: the store behind each part of
// it (cmd/sip hands the same store to every field). Without Attempts,
// Challenges, Results, Revocations and Presented no evaluation can be
// taken; Jobs with Judging, and Sessions with Messages, Proctoring and
// Seats, may be nil: the evaluations that need them then cannot be taken.
type Config struct {
	Versions    VersionStore
	Agents      agentStore
	Attempts    AttemptStore
	Challenges  ChallengeStore
	Results     ResultStore
	Revocations RevocationStore
	Presented   PresentedStore
	Jobs        JobStore
	Judging     JudgingStore
	Sessions    SessionStore
	Messages    MessageStore
	Proctoring  ProctorStore
	Seats       SeatStore
	// JudgeConfigured says whether a judge works the jobs; without one a
	// proctor grades a benchmark's free answers.
	JudgeConfigured bool
	// Now tells the time (time.Now when nil).
	Now func() time.Time
	// Build names the sip build in execution records.
	Build string
	// RecordKey keys the digests of inputs in execution records (at least
	// 32 bytes, shared by every replica; sip serve keeps it in the
	// database). Without one a random key is made, good for this process.
	RecordKey []byte
	// Key opens benchmarks' sealed answers (the registry's sealing key);
	// without one a benchmark with sealed answers cannot be taken.
	Key Opener
	// Issuers reaches other registries for credentials agents present;
	// without it none can be presented.
	Issuers Issuers
	// Posts reads posts on X for agents' claims; without it agents cannot
	// be claimed.
	Posts PostReader
	// Credentials checks external credentials again when they meet a
	// prerequisite (signature, validity, status); without it credential
	// prerequisites cannot be met.
	Credentials CredentialChecker
	// DevelopmentClaims lets agents be claimed without a post on X
	// (DevelopmentClaim), for a registry on a developer's machine: sip
	// serve sets it only with --dev-claims, which it refuses beyond
	// loopback, with a public SIP_BASE_URL, or with the GitHub App.
	DevelopmentClaims bool
}

// Service is the runtime of evaluations: the operations agents and
// proctors perform, each deciding its rules here, once, whatever the
// transport. Every decision about an attempt reads the definition of the
// version its registration pinned.
type Service struct {
	agents          agentStore
	posts           PostReader
	issuers         Issuers
	attempts        AttemptStore
	challenges      ChallengeStore
	results         ResultStore
	revocations     RevocationStore
	presented       PresentedStore
	jobs            JobStore
	judging         JudgingStore
	sessions        SessionStore
	messages        MessageStore
	proctorStore    ProctorStore
	seats           SeatStore
	defs            *definitions
	runners         map[string]Runner
	judgeConfigured bool
	now             func() time.Time
	build           string
	recordKey       []byte
	opener          Opener
	keys            answerKeys
	credentials     CredentialChecker
	devClaims       bool
}

// New builds a service.
func New(cfg Config) *Service {
	s := &Service{agents: cfg.Agents, attempts: cfg.Attempts, challenges: cfg.Challenges, results: cfg.Results,
		revocations: cfg.Revocations, presented: cfg.Presented, jobs: cfg.Jobs, judging: cfg.Judging,
		sessions: cfg.Sessions, messages: cfg.Messages, proctorStore: cfg.Proctoring, seats: cfg.Seats,
		defs: &definitions{store: cfg.Versions}, judgeConfigured: cfg.JudgeConfigured, now: cfg.Now, build: cfg.Build}
	if s.now == nil {
		s.now = time.Now
	}
	s.opener, s.credentials, s.posts, s.issuers = cfg.Key, cfg.Credentials, cfg.Posts, cfg.Issuers
	s.recordKey, s.devClaims = cfg.RecordKey, cfg.DevelopmentClaims
	if len(s.recordKey) == 0 {
		s.recordKey = make([]byte, 32)
		rand.Read(s.recordKey)
	}
	s.runners = map[string]Runner{}
	for _, r := range runners {
		s.runners[r.Handler()] = r
	}
	return s
}

// runner returns the runner of e's handler if this service can run it.
func (s *Service) runner(handler string) Runner {
	r := s.runners[handler]
	if r == nil || !r.Runs(s) {
		return nil
	}
	return r
}

// Runnable reports whether this service runs the handler: it has a
// runner, and the stores that runner needs.
func (s *Service) Runnable(handler string) bool { return s.runner(handler) != nil }

// JudgeConfigured reports whether a judge grades this service's jobs.
func (s *Service) JudgeConfigured() bool { return s.judgeConfigured }

// ValidPasses maps the evaluations an agent holds a pass of that has not
// expired to that pass (the newest).
func (s *Service) ValidPasses(ctx context.Context, agentID string) (map[string]*Result, error) {
	passes, err := s.attempts.Passes(ctx, agentID, s.now())
	if err != nil {
		return nil, err
	}
	valid := map[string]*Result{}
	for _, p := range passes {
		if !p.Of().Evidenced() {
			continue // asserted without an attempt: meets no prerequisite
		}
		valid[p.EvaluationID] = p
	}
	return valid, nil
}

// Register opens a registration of the agent for e under e's current
// version (created), or returns the open one, if the agent may register
// now (mayRegister: the rule the listing shows too).
func (s *Service) Register(ctx context.Context, agentID string, e *registry.Entry) (_ *Registration, created bool, _ error) {
	c := &candidate{s: s, agentID: agentID}
	if err := s.mayRegister(ctx, c, e); err != nil {
		return nil, false, err
	}
	limit, err := s.attemptLimit(ctx, c, e)
	if err != nil {
		return nil, false, err
	}
	for range 2 {
		now := s.now()
		// The store checks the limit again in the transaction that
		// inserts: what mayRegister read may be stale by now.
		reg, created, err := s.attempts.RegisterWithin(ctx, &Registration{ID: registry.NewID("reg_"), AgentID: agentID, EvaluationID: e.ID,
			VersionID: e.Current.ID, RegisteredAt: now}, limit)
		var reached *LimitReached
		if errors.As(err, &reached) {
			return nil, false, limitRefusal(e, reached)
		}
		if err != nil || created || !reg.Overdue(now) {
			return reg, created, err
		}
		// The open attempt's deadline passed and the sweeper has not
		// ended it yet: end it now, and register anew.
		ended, err := s.expire(ctx, reg, now)
		if err != nil {
			return nil, false, err
		}
		if !ended {
			// A claimed proctored attempt past its claim deadline is its
			// session's to end: it is still the open one.
			if cur, err := s.attempts.Registration(ctx, reg.ID); err == nil && cur.Status.Open() {
				return cur, false, nil
			}
		}
	}
	return nil, false, conflict("conflict", "your open attempt at "+e.ID+" is still ending", "Register again in a moment.")
}

// Take is one operation on an agent's attempt: the caller's id, the
// evaluation as it is now, and, once found, the open registration with
// the definition it pinned.
type Take struct {
	s       *Service
	AgentID string
	Entry   *registry.Entry
	Reg     *Registration
	Def     *Definition
}

func (s *Service) take(agentID string, e *registry.Entry) *Take {
	return &Take{s: s, AgentID: agentID, Entry: e}
}

// open finds the agent's open registration and its pinned definition.
func (t *Take) open(ctx context.Context) error {
	if t.Reg != nil {
		return nil
	}
	reg, err := t.s.attempts.OpenRegistration(ctx, t.AgentID, t.Entry.ID)
	if errors.Is(err, registry.ErrNotFound) {
		return NotRegistered(t.Entry)
	}
	if err != nil {
		return err
	}
	return t.pin(ctx, reg)
}

// pin sets the registration and reads the definition it pinned.
func (t *Take) pin(ctx context.Context, reg *Registration) error {
	def, err := t.s.defs.pinned(ctx, reg.EvaluationID, reg.VersionID, t.Entry)
	if err != nil {
		return err
	}
	t.Reg, t.Def = reg, def
	return nil
}

// Started is what starting an attempt hands the agent. Which fields are
// set depends on the evaluation's handler.
type Started struct {
	Created      bool
	Registration *Registration
	// Status and Instructions say what to do next.
	Status       string
	Instructions string
	Challenge    *Challenge          // PoAW
	Questions    []registry.Question // benchmark, without answers or rubrics
	Prompts      []registry.Prompt   // certification, without should lists
	PassingScore float64
	ExpiresAt    time.Time
	Job          *Job // certification
	// MultiAgent is set for proctored and live evaluations; Session is
	// their session, nil while a candidate waits for a proctor.
	MultiAgent bool
	Session    *Session
}

// Submitted is what a submission produced: a result, or a job queued for
// its grader.
type Submitted struct {
	Result *Result
	Job    *Job
}

// Start starts (or resumes) the agent's open attempt at e.
func (s *Service) Start(ctx context.Context, agentID string, e *registry.Entry) (*Started, error) {
	r := s.runner(e.Handler)
	if r == nil {
		return nil, conflict("conflict", e.ID+" cannot be started on this server yet", "Take an evaluation whose can_register is true.")
	}
	// An unclaimed agent is told what it lacks before that it has no
	// registration (Register refuses it for the same reason).
	if e.RequiresClaimed() {
		me, err := s.agents.AgentByID(ctx, agentID)
		if err != nil {
			return nil, err
		}
		if err := mustBeClaimed(&e.SIP, me); err != nil {
			return nil, err
		}
	}
	return r.Start(ctx, s.take(agentID, e))
}

// RegisterAndStart starts the agent's open attempt at e as Start does,
// and when it has none registers it first, as Register does (the same
// rules and refusals). An open registration is started as it is:
// Register's rules decide only whether a new one may open. One whose
// time ran out is ended first, as the sweep would end it, and replaced.
func (s *Service) RegisterAndStart(ctx context.Context, agentID string, e *registry.Entry) (*Started, error) {
	st, err := s.startOpen(ctx, agentID, e)
	if !errors.Is(err, errNoOpenAttempt) {
		return st, err
	}
	if _, _, err := s.Register(ctx, agentID, e); err != nil {
		return nil, err
	}
	return s.Start(ctx, agentID, e)
}

// errNoOpenAttempt is startOpen's answer when the agent has no attempt to
// start: none open, or the open one's time ran out.
var errNoOpenAttempt = errors.New("no open attempt")

// startOpen starts the agent's open registration for e as Start does. It
// answers errNoOpenAttempt when there is none, or when that one is past
// its deadline and ends (here, as the sweep ends it, or meanwhile). A
// registration past its deadline that is not this request's to end (a
// proctored attempt in its session) is started as it is.
func (s *Service) startOpen(ctx context.Context, agentID string, e *registry.Entry) (*Started, error) {
	now := s.now()
	reg, err := s.attempts.OpenRegistration(ctx, agentID, e.ID)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, errNoOpenAttempt
	}
	if err != nil {
		return nil, err
	}
	if reg.Overdue(now) {
		ended, err := s.expire(ctx, reg, now)
		if err != nil {
			return nil, err
		}
		if ended {
			return nil, errNoOpenAttempt
		}
	}
	st, err := s.Start(ctx, agentID, e)
	var r *Refusal
	if errors.Is(err, registry.ErrGone) || errors.As(err, &r) && r.Code == "not_registered" {
		return nil, errNoOpenAttempt // it ended since the look: its deadline passed, or the sweep
	}
	return st, err
}

// Submit grades the agent's submission for its open attempt at e, or
// queues it for a grader. decode reads the submission into the value the
// handler's runner gives it; not being registered is reported before a
// malformed submission.
func (s *Service) Submit(ctx context.Context, agentID string, e *registry.Entry, decode func(any) error) (*Submitted, error) {
	r := s.runner(e.Handler)
	if r == nil {
		return nil, conflict("conflict", e.ID+" cannot be submitted on this server yet", "Take an evaluation whose can_register is true.")
	}
	return r.Submit(ctx, s.take(agentID, e), decode)
}

// decodeFor decodes a submission into v; a malformed one is refused, but
// only after the caller's registration is found.
func (t *Take) decode(ctx context.Context, decode func(any) error, v any) error {
	if err := decode(v); err != nil {
		if oerr := t.open(ctx); oerr != nil {
			return submitRefusal(t.Entry, oerr)
		}
		return err
	}
	return nil
}

// submitRefusal adds to not_registered that a registration takes one result.
func submitRefusal(e *registry.Entry, err error) error {
	var r *Refusal
	if errors.As(err, &r) && r.Code == "not_registered" {
		return notRegisteredToSubmit(e)
	}
	return err
}

// Cancel cancels the agent's open attempt at e. A started attempt ends
// with a cancelled result; a seat in a forming session is given back; an
// attempt whose session started, or that awaits its grade, cannot be
// cancelled.
func (s *Service) Cancel(ctx context.Context, agentID string, e *registry.Entry) (*Registration, error) {
	t := s.take(agentID, e)
	if err := t.open(ctx); err != nil {
		return nil, err
	}
	if r := s.runner(e.Handler); r != nil {
		if c, ok := r.(canceller); ok {
			if err := c.cancel(ctx, t); err != nil {
				return nil, err
			}
		}
	}
	reg := t.Reg
	cannot := conflict("conflict", "the attempt at "+e.ID+" is "+string(reg.Status)+" and can no longer be cancelled", "Wait for its result.")
	if reg.Status == RegRegistered {
		moved, err := s.attempts.MoveRegistration(ctx, reg.ID, []RegistrationStatus{RegRegistered}, RegCancelled, s.now())
		if errors.Is(err, registry.ErrConflict) {
			return nil, cannot
		}
		return moved, err
	}
	if reg.Status != RegInProgress {
		return nil, cannot
	}
	res, points := s.newResult(t.Def, reg, grade{outcome: OutcomeCancelled, reason: "cancelled by the agent"}, s.now())
	if _, err := s.attempts.RecordResult(ctx, res, points); errors.Is(err, registry.ErrConflict) {
		return nil, cannot
	} else if err != nil {
		return nil, err
	}
	out := *reg
	out.Status, out.CompletedAt = RegCancelled, res.CompletedAt
	return &out, nil
}

// canceller is a runner with something to undo when an attempt is
// cancelled.
type canceller interface {
	cancel(ctx context.Context, t *Take) error
}

// record stores a graded attempt's result: the one path from a grade to
// the database for attempts the candidate submits.
func (s *Service) recordGrade(ctx context.Context, t *Take, g grade) (*Submitted, error) {
	res, points := s.newResult(t.Def, t.Reg, g, s.now())
	saved, err := s.attempts.RecordResult(ctx, res, points)
	if errors.Is(err, registry.ErrConflict) {
		return nil, conflict("already_completed", "this registration already has its result", "Register again for another attempt.")
	}
	if err != nil {
		return nil, err
	}
	return &Submitted{Result: saved}, nil
}

// moveToStarted moves a registration to in_progress (again); its first
// start sets its deadline (none when zero).
func (s *Service) moveToStarted(ctx context.Context, reg *Registration, deadline time.Time) (*Registration, error) {
	return s.attempts.StartAttempt(ctx, reg.ID, s.now(), deadline)
}
