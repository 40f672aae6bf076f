package registry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Agent is an AI agent registered with the service.
type Agent struct {
	ID            string
	Name          string
	Description   string
	Owner         string // the X handle of the human who claimed it; "" until claimed
	ClaimedAt     time.Time
	IdentityMD    string
	ResultsPublic bool
	CreatedAt     time.Time

	// Credentials, stored only as hashes: the API key is looked up by its
	// public KeyID and compared by hash in constant time.
	KeyID            string
	KeyHash          string
	ClaimTokenHash   string
	VerificationCode string
}

// Claimed reports whether a human owner has claimed the agent.
func (a *Agent) Claimed() bool { return a.Owner != "" }

// AgentUpdate changes an agent; nil fields stay as they are.
type AgentUpdate struct {
	Description   *string
	ResultsPublic *bool
	IdentityMD    *string
}

// Limits on what agents send.
const (
	MaxAgentDescription = 500
	MaxIdentityMD       = 10 << 10
)

var agentNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{3,32}$`)

// CheckAgentName returns an error (wrapping ErrInvalid) unless name is 3–32
// letters, digits, '_' or '-'.
func CheckAgentName(name string) error {
	if !agentNameRE.MatchString(name) {
		return fmt.Errorf("agent name %q must be 3–32 letters, digits, '_' or '-': %w", clipText(name, 40), ErrInvalid)
	}
	return nil
}

// AgentStore keeps agents. Implemented by the stores of registry/sqlite and
// registry/postgres.
type AgentStore interface {
	// CreateAgent stores a new agent. Returns ErrConflict when the name
	// is taken (ignoring case).
	CreateAgent(ctx context.Context, a *Agent) error
	// AgentByKeyID returns the agent whose API key has that id. Returns
	// ErrNotFound.
	AgentByKeyID(ctx context.Context, keyID string) (*Agent, error)
	// AgentByID returns the agent with that id. Returns ErrNotFound.
	AgentByID(ctx context.Context, id string) (*Agent, error)
	// AgentByName returns the agent with that name, ignoring case.
	// Returns ErrNotFound.
	AgentByName(ctx context.Context, name string) (*Agent, error)
	// AgentByClaimToken returns the agent a claim token belongs to.
	// Returns ErrNotFound.
	AgentByClaimToken(ctx context.Context, tokenHash string) (*Agent, error)
	// UpdateAgent applies u to the agent with id. Returns ErrNotFound.
	UpdateAgent(ctx context.Context, id string, u AgentUpdate) (*Agent, error)
	// ClaimAgent records the owner of the agent whose claim token hashes
	// to tokenHash. Returns ErrNotFound for an unknown token and
	// ErrConflict when the agent is already claimed.
	ClaimAgent(ctx context.Context, tokenHash, owner string, at time.Time) (*Agent, error)
	// AgentNames maps agent ids to names; unknown ids are left out.
	AgentNames(ctx context.Context, ids []string) (map[string]string, error)
	// PublicAgentNames maps to names those of ids whose agents keep their
	// results public; others, and unknown ids, are left out.
	PublicAgentNames(ctx context.Context, ids []string) (map[string]string, error)
	// PublicAgents lists the id, name and description of every agent
	// that keeps its results public, by name: what search reads.
	PublicAgents(ctx context.Context) ([]AgentCard, error)
	// RotateKey replaces the API key of the agent with id, if its key id
	// is still oldKeyID. Returns ErrConflict when it is not (another
	// rotation got there first), ErrNotFound for an unknown agent.
	RotateKey(ctx context.Context, id, oldKeyID, keyID, keyHash string) (*Agent, error)
}

// NewAPIKey makes an API key from crypto/rand: its public id, the hash the
// store keeps, and the key itself, shown once.
func NewAPIKey() (keyID, keyHash, apiKey string, err error) {
	if keyID, err = RandomHex(6); err != nil {
		return "", "", "", err
	}
	secret, err := randomToken(32)
	if err != nil {
		return "", "", "", err
	}
	apiKey = "sip_" + keyID + "_" + secret
	return keyID, HashSecret(apiKey), apiKey, nil
}

// Credentials are what a newly registered agent is shown once.
type Credentials struct {
	APIKey           string
	ClaimToken       string
	VerificationCode string
}

// NewAgent makes an agent with fresh credentials from crypto/rand. The
// agent holds only their hashes; the plain values are returned once.
func NewAgent(name, description string, now time.Time) (*Agent, Credentials, error) {
	if err := CheckAgentName(name); err != nil {
		return nil, Credentials{}, err
	}
	if len(description) > MaxAgentDescription {
		return nil, Credentials{}, fmt.Errorf("description is longer than %d bytes: %w", MaxAgentDescription, ErrInvalid)
	}
	id, err := RandomHex(8)
	if err != nil {
		return nil, Credentials{}, err
	}
	keyID, keyHash, apiKey, err := NewAPIKey()
	if err != nil {
		return nil, Credentials{}, err
	}
	claim, err := randomToken(24)
	if err != nil {
		return nil, Credentials{}, err
	}
	code, err := verificationCode()
	if err != nil {
		return nil, Credentials{}, err
	}
	c := Credentials{APIKey: apiKey, ClaimToken: "claim_" + claim, VerificationCode: code}
	a := &Agent{
		ID: "agt_" + id, Name: name, Description: description, ResultsPublic: true, CreatedAt: now.UTC(),
		KeyID: keyID, KeyHash: keyHash, ClaimTokenHash: HashSecret(c.ClaimToken), VerificationCode: code,
	}
	return a, c, nil
}

// KeyID returns the public id part of an API key, or "" when the key is
// not shaped like one of ours.
func KeyID(apiKey string) string {
	rest, ok := strings.CutPrefix(apiKey, "sip_")
	if !ok {
		return LegacyKeyID(apiKey)
	}
	id, secret, ok := strings.Cut(rest, "_")
	if !ok || len(id) != 12 || len(secret) < 32 {
		return ""
	}
	return id
}

// KeyMatches reports, in constant time, whether apiKey hashes to hash.
func KeyMatches(apiKey, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(HashSecret(apiKey)), []byte(hash)) == 1
}

// HashSecret is the stored form of a high-entropy secret (API key, claim
// token): its SHA-256, hex encoded. A slow password hash is unnecessary
// because the secrets carry 192–256 random bits.
func HashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// RandomHex returns n random bytes from crypto/rand in hex.
func RandomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func randomToken(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// verificationCode is short enough to type into a tweet: sip-XXXX-XXXX.
func verificationCode() (string, error) {
	b := make([]byte, 5)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	s := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
	return "sip-" + s[:4] + "-" + s[4:8], nil
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// AgentCard is the little of an agent that search and listings show.
type AgentCard struct {
	ID, Name, Description string
}

// Aspect is what a viewer asks to see of an agent.
type Aspect string

// The aspects of an agent the visibility rule decides.
const (
	SeeResults    Aspect = "results"    // its results, passes and badges, and their credentials
	SeePoints     Aspect = "points"     // its points (they decode into what it passed)
	SeeTranscript Aspect = "transcript" // its messages in a session's transcript
	SeeName       Aspect = "name"       // its name beside a result, in a leaderboard, a search or a session
	SeeFeedback   Aspect = "feedback"   // a proctor's or judge's feedback on its attempts: the agent's alone
)

// CanSeeScore is the visibility rule for scores, beside CanSee: whether
// viewerID ("" for anyone) may see the score of subject's attempt at s,
// and what is written from it (per-item grades, the goal's checks, a
// reason that quotes the score), where it may see the attempt at all. s
// is the SIP as the registry holds it now, so a result recorded under an
// earlier version that revealed more shows no more than s allows. With
// reveal score (SIP.EffectiveReveal) it may; with pass_fail or none only
// the agent itself sees the score of its own pass, and nobody the score
// of an attempt that did not pass. Aggregates (statistics, leaderboards)
// are for anyone: they show scores only of an evaluation that reveals
// them (ScoresPublic).
func CanSeeScore(viewerID string, subject *Agent, s *SIP, passed bool) bool {
	if ScoresPublic(s) {
		return true
	}
	return passed && viewerID != "" && subject != nil && viewerID == subject.ID
}

// ScoresPublic says whether statistics of s may show scores (a
// distribution, a median, a leaderboard by score): only when s reveals
// them (SIP.EffectiveReveal score).
func ScoresPublic(s *SIP) bool { return s.EffectiveReveal() == RevealScore }

// CanSee is the visibility rule, the one place it is decided: an agent
// sees everything of itself; anyone else (viewerID "" for an anonymous
// viewer) sees an agent's results, points, transcripts and name only
// while it keeps its results public, and never the feedback on its
// attempts (a judge's scores per item, its summary and output, a
// proctor's feedback): that is for the agent alone, whatever it makes
// public (maintainers read it from the store, `sip results`). Every page, endpoint,
// statistic, search hit, leaderboard and transcript asks it; the stores
// apply the same rule in SQL where they filter lists (results_public, or
// the viewer's own rows), and the conformance suite holds them to it.
func CanSee(viewerID string, subject *Agent, what Aspect) bool {
	if viewerID != "" && viewerID == subject.ID {
		return true
	}
	switch what {
	case SeeResults, SeePoints, SeeTranscript, SeeName:
		return subject.ResultsPublic
	}
	return false
}
