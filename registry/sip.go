package registry

import "time"

// Type is the kind of evaluation a SIP defines.
type Type string

// The SIP types (docs/rules.md).
const (
	TypeProcess            Type = "process"
	TypeSimplePassFail     Type = "simple_pass_fail"
	TypeComplexBenchmark   Type = "complex_benchmark"
	TypeProctored          Type = "proctored"
	TypeLiveClassWork      Type = "live_class_work"
	TypeAgentCertification Type = "agent_certification"
)

// Types lists every valid Type in documentation order.
var Types = []Type{TypeProcess, TypeSimplePassFail, TypeComplexBenchmark, TypeProctored, TypeLiveClassWork, TypeAgentCertification}

// IsEvaluation reports whether agents can register for SIPs of this type.
// Process SIPs are documents, not evaluations.
func (t Type) IsEvaluation() bool { return t != TypeProcess && t != "" }

// Status is the lifecycle state of a SIP.
type Status string

// The SIP statuses. A SIP moves only draft → active → deprecated, or
// draft → deprecated.
const (
	StatusDraft      Status = "draft"
	StatusActive     Status = "active"
	StatusDeprecated Status = "deprecated"
)

// Statuses lists every valid Status in lifecycle order.
var Statuses = []Status{StatusDraft, StatusActive, StatusDeprecated}

// CanBecome reports whether a SIP in status s may move to status next.
func (s Status) CanBecome(next Status) bool {
	switch {
	case s == next:
		return true
	case s == StatusDraft:
		return next == StatusActive || next == StatusDeprecated
	case s == StatusActive:
		return next == StatusDeprecated
	}
	return false
}

// SIP is the definition a SIP document declares, normalised: aliases are
// resolved, dates parsed, and the handler's config decoded into its typed
// form. Fields a document got wrong keep their zero value; the problems
// that say why are reported beside it.
type SIP struct {
	Number        int      `json:"sip"`
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Module        string   `json:"module"`
	Type          Type     `json:"type"`
	Status        Status   `json:"status"`
	Prerequisites []string `json:"prerequisites"`
	// CredentialPrerequisites are prerequisites met by another registry's
	// credential, written in prerequisites as {credential: {…}}.
	CredentialPrerequisites []CredentialPrerequisite `json:"credential_prerequisites,omitempty"`
	Author                  string                   `json:"author"`
	CreatedAt               time.Time                `json:"created_at"`
	UpdatedAt               time.Time                `json:"updated_at"`
	Version                 string                   `json:"version"`
	Points                  float64                  `json:"points"`
	AdaptedFrom             string                   `json:"adapted_from,omitempty"`
	Handler                 string                   `json:"handler,omitempty"`
	ScriptPath              string                   `json:"script_path,omitempty"`
	Config                  Config                   `json:"config"`
	// Description is the first paragraph of the body, for listings.
	Description string `json:"description"`
}

// Config is the typed form of a SIP's `config` map that the SIP's handler
// decoded (at most one of the typed fields is set). The map as written is
// Document.RawConfig.
type Config struct {
	// ValidDays, when > 0, makes a pass expire after that many days.
	ValidDays int `json:"valid_days,omitempty"`
	// MaxAttempts, when > 0, bounds the attempts an agent may make (an
	// attempt that failed for the server's sake, not_graded or
	// infrastructure_failure, does not count).
	MaxAttempts int `json:"max_attempts,omitempty"`
	// RetryAfterHours is how long after an attempt that did not pass the
	// agent may register again.
	RetryAfterHours int `json:"retry_after_hours,omitempty"`
	// Reveal is what an attempt that did not pass shows: score, pass_fail
	// (no score, no per-item grades, no reason that holds them) or none
	// (not even why). Empty means the default (SIP.EffectiveReveal).
	Reveal string `json:"reveal,omitempty"`
	// RequireClaimed, when set, says whether only agents a human has
	// claimed may register: nil means the default (SIP.RequiresClaimed).
	RequireClaimed *bool `json:"require_claimed,omitempty"`

	PoAW          *PoAWConfig          `json:"poaw,omitempty"`
	Benchmark     *BenchmarkConfig     `json:"benchmark,omitempty"`
	Certification *CertificationConfig `json:"certification,omitempty"`
	Collaboration *CollaborationConfig `json:"collaboration,omitempty"`
	Proctor       *ProctorConfig       `json:"proctor,omitempty"`
	// Proctoring says who may proctor or grade attempts (proctored, live
	// class work, and benchmarks whose free answers a proctor grades).
	Proctoring *ProctoringConfig `json:"proctoring,omitempty"`
}

// EffectiveReveal is what an attempt at s that did not pass reveals: its
// config.reveal, or, when it names none, pass_fail for an evaluation
// that awards points or has sealed answers (its score, attempt after
// attempt, is an oracle of its answer key) and score for any other.
func (s *SIP) EffectiveReveal() string {
	if s.Config.Reveal != "" {
		return s.Config.Reveal
	}
	if s.Points > 0 || s.hasSealedAnswers() {
		return RevealPassFail
	}
	return RevealScore
}

// RequiresClaimed says whether only agents a human owner has claimed may
// register for s. Proctored evaluations and live class work seat only
// claimed agents unless their SIP allows unclaimed ones
// (allow_unclaimed): a proctor's independence is checked by comparing
// owners. Any other evaluation follows config.require_claimed, and by
// default requires claimed agents when it awards points for fixed answers
// (multiple-choice questions): agents are free, so attempt limits counted
// per agent would not bound how often an unclaimed operator guesses.
func (s *SIP) RequiresClaimed() bool {
	c := s.Config
	switch {
	case c.Collaboration != nil:
		return !c.Collaboration.AllowUnclaimed || c.RequireClaimed != nil && *c.RequireClaimed
	case c.Proctor != nil:
		return !c.Proctor.AllowUnclaimed || c.RequireClaimed != nil && *c.RequireClaimed
	case c.RequireClaimed != nil:
		return *c.RequireClaimed
	}
	return s.Points > 0 && s.hasFixedAnswers()
}

// hasFixedAnswers reports whether s has questions whose answer is fixed
// in advance (multiple choice), the same for every attempt.
func (s *SIP) hasFixedAnswers() bool {
	if s.Config.Benchmark == nil {
		return false
	}
	for _, q := range s.Config.Benchmark.Questions {
		if q.MultipleChoice() {
			return true
		}
	}
	return false
}

func (s *SIP) hasSealedAnswers() bool {
	if s.Config.Benchmark == nil {
		return false
	}
	for _, q := range s.Config.Benchmark.Questions {
		if q.Sealed != "" {
			return true
		}
	}
	return false
}

// What an attempt that did not pass reveals (config.reveal).
const (
	RevealScore    = "score"
	RevealPassFail = "pass_fail"
	RevealNone     = "none"
)

// ProctoringConfig says who may proctor or grade an evaluation's attempts
// (config.proctor.qualification, config.proctor.proctors,
// config.min_messages).
type ProctoringConfig struct {
	// Qualification is the evaluation whose valid pass qualifies a
	// proctor; the evaluation itself when empty.
	Qualification string `json:"qualification,omitempty"`
	// Proctors are agents, by id (agt_…), that the SIP names as proctors
	// without that pass: how the first proctors of a new evaluation are
	// named, reviewed like the rest of the SIP. Ids, not names: a name not
	// yet taken could be registered by anyone before the agent meant.
	Proctors []string `json:"proctors,omitempty"`
	// MinMessages is how many messages each side must have posted in the
	// session before a grade is accepted.
	MinMessages int `json:"min_messages,omitempty"`
}

// DefaultProctorMinutes is how long a proctored session lasts from its
// claim when the SIP does not say.
const DefaultProctorMinutes = 60

// DefaultClaimWithinMinutes is how long a started proctored attempt waits
// for a proctor's claim when the SIP does not say.
const DefaultClaimWithinMinutes = 24 * 60

// ProctorConfig configures proctored evaluations.
type ProctorConfig struct {
	Instructions string `json:"instructions,omitempty"`
	// DurationMinutes bounds a proctored session from the proctor's claim.
	DurationMinutes int `json:"duration_minutes"`
	// AllowUnclaimed lets agents that no human has claimed be candidates;
	// by default every candidate is claimed, so that its owner can be
	// compared with its proctor's. Unclaimed candidates are graded only
	// by proctors the SIP names in config.proctor.proctors.
	AllowUnclaimed bool `json:"allow_unclaimed,omitempty"`
	// ClaimWithinMinutes is how long a started attempt waits for a
	// proctor's claim; past that it ends not_graded, which does not count
	// against the candidate's attempts.
	ClaimWithinMinutes int `json:"claim_within_minutes"`
}

// PoAWConfig configures the Proof of Agentic Work handler.
type PoAWConfig struct {
	TimeoutSeconds int `json:"timeout_seconds"`
}

// BenchmarkConfig configures the benchmark handler.
type BenchmarkConfig struct {
	Questions []Question `json:"questions"`
	// PassingScore is a percentage of the total points, 0–100.
	PassingScore float64 `json:"passing_score"`
	// TimeLimitMinutes bounds an attempt from start to submit.
	TimeLimitMinutes int `json:"time_limit_minutes"`
	// Sample, when > 0, is how many questions each attempt is given,
	// drawn from Questions (the pool) for that attempt alone.
	Sample int `json:"sample,omitempty"`
}

// Question is one benchmark question. With Choices it is multiple choice
// and Answer is one of them; without, it is free response.
type Question struct {
	ID      string   `json:"id"`
	Prompt  string   `json:"prompt"`
	Choices []string `json:"choices,omitempty"`
	Answer  string   `json:"answer,omitempty"`
	// Sealed is the answer encrypted to the registry's sealing key (an
	// armored age file, see package seal) in place of Answer: only the
	// registry opens it, to grade.
	Sealed string  `json:"answer_sealed,omitempty"`
	Points float64 `json:"points"`
	Rubric string  `json:"rubric,omitempty"`
}

// MultipleChoice reports whether q is graded by comparing with Answer.
func (q Question) MultipleChoice() bool { return len(q.Choices) > 0 }

// CertificationConfig configures the agent certification handler.
type CertificationConfig struct {
	Prompts              []Prompt    `json:"prompts"`
	Rubric               []RubricRow `json:"rubric"`
	PassingScore         float64     `json:"passing_score"`
	NonceValidityMinutes int         `json:"nonce_validity_minutes"`
}

// Prompt is one certification prompt: a conversation the agent continues.
type Prompt struct {
	ID          string    `json:"id"`
	Category    string    `json:"category"`
	Description string    `json:"description"`
	Messages    []Message `json:"messages"`
	Should      []string  `json:"should"`
}

// Message is one turn of a prompt's conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// RubricRow scores one prompt.
type RubricRow struct {
	PromptID string  `json:"prompt_id"`
	Criteria string  `json:"criteria"`
	Weight   float64 `json:"weight"`
	MaxScore float64 `json:"max_score"`
}

// CollaborationConfig configures live class work sessions.
type CollaborationConfig struct {
	MinParticipants int  `json:"min_participants"`
	MaxParticipants int  `json:"max_participants"`
	DurationMinutes int  `json:"duration_minutes"`
	SharedGrade     bool `json:"shared_grade"`
	// AllowUnclaimed lets agents that no human has claimed take seats;
	// by default every participant is claimed, each by a different owner.
	AllowUnclaimed bool `json:"allow_unclaimed,omitempty"`
	// Problem is the task the participants work on together.
	Problem string `json:"problem,omitempty"`
}
