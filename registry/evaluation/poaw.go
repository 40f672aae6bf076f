package evaluation

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sipregistry/sip/registry"
)

// PoAWValues is how many numbers a challenge holds.
const PoAWValues = 30

// NewChallenge makes a challenge of 30 integers in 0–9999 and a nonce,
// from crypto/rand.
func NewChallenge(registrationID, agentID string, now time.Time, ttl time.Duration) (*Challenge, error) {
	id, err := registry.RandomHex(10)
	if err != nil {
		return nil, err
	}
	nonce, err := registry.RandomHex(16)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 2*PoAWValues)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	values := make([]int, PoAWValues)
	for i := range values {
		values[i] = int(binary.BigEndian.Uint16(b[2*i:])) % 10000
	}
	return &Challenge{ID: "ch_" + id, RegistrationID: registrationID, AgentID: agentID, Values: values, Nonce: nonce,
		CreatedAt: now.UTC(), ExpiresAt: now.UTC().Add(ttl)}, nil
}

// PoAWHash is the answer to a challenge: the SHA-256, in lower-case hex,
// of the values sorted ascending as JSON without spaces, followed by the
// nonce. Values [3,1,2] and nonce "n" hash the text "[1,2,3]n".
func PoAWHash(values []int, nonce string) string {
	// On the stack for a challenge's 30 values: this runs on every
	// submission and in every agent.
	var sortedBuf [PoAWValues]int
	sorted := append(sortedBuf[:0], values...)
	slices.Sort(sorted)
	var text [8 * PoAWValues]byte
	b := append(text[:0], '[')
	for i, v := range sorted {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	b = append(b, ']')
	sum := sha256.Sum256(append(b, nonce...))
	return hex.EncodeToString(sum[:])
}

// CheckPoAW reports, in constant time, whether hash answers c.
func CheckPoAW(c *Challenge, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(PoAWHash(c.Values, c.Nonce)), []byte(strings.ToLower(strings.TrimSpace(hash)))) == 1
}

// poawRunner runs Proof of Agentic Work: 30 numbers and a nonce, sorted,
// hashed and answered before the challenge expires. Start and submit each
// find the registration in the statement that does their work.
type poawRunner struct{ always }

func (poawRunner) Handler() string { return "poaw_handler" }

// challengeTTL is how long a challenge of def lives.
func challengeTTL(def *Definition) time.Duration {
	timeout := registry.DefaultPoAWTimeoutSeconds
	if def.Config.PoAW != nil {
		timeout = def.Config.PoAW.TimeoutSeconds
	}
	return time.Duration(timeout) * time.Second
}

func (poawRunner) Start(ctx context.Context, t *Take) (*Started, error) {
	now := t.s.now()
	cur := current(t.Entry)
	fresh, err := NewChallenge("", t.AgentID, now, challengeTTL(cur))
	if err != nil {
		return nil, err
	}
	// The open challenge if there is one (start repeated returns it),
	// else this new one; one statement finds the registration too.
	ch, created, err := t.s.challenges.StartChallenge(ctx, t.Entry.ID, fresh)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, NotRegistered(t.Entry)
	}
	if errors.Is(err, registry.ErrGone) {
		return nil, t.s.endOverdue(ctx, t.AgentID, t.Entry, now)
	}
	if err != nil {
		return nil, err
	}
	if created && ch.VersionID != cur.VersionID {
		// Registered under an earlier version: its timeout holds.
		def, err := t.s.defs.pinned(ctx, t.Entry.ID, ch.VersionID, t.Entry)
		if err != nil {
			return nil, err
		}
		if ttl := challengeTTL(def); ttl != challengeTTL(cur) {
			if err := t.s.challenges.SetChallengeExpiry(ctx, ch.ID, ch.CreatedAt.Add(ttl)); err != nil {
				return nil, err
			}
			ch.ExpiresAt = ch.CreatedAt.Add(ttl)
		}
	}
	e := t.Entry
	return &Started{Created: created, Registration: &Registration{ID: ch.RegistrationID, EvaluationID: e.ID}, Challenge: ch,
		Instructions: "Sort the 30 integers in values ascending, write them as JSON without spaces, append the nonce, " +
			"and submit the lower-case hex SHA-256 of that text as {\"challenge_id\", \"hash\"} to " + evaluationPath(e) + "/submit before expires_at " +
			"(fetch_url gives the values and nonce again while the challenge is open)."}, nil
}

// PoAWSubmission answers a challenge.
type PoAWSubmission struct {
	ChallengeID string `json:"challenge_id"`
	Hash        string `json:"hash"`
}

var hexHash = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{64}$`) })

func (poawRunner) Submit(ctx context.Context, t *Take, decode func(any) error) (*Submitted, error) {
	var sub PoAWSubmission
	if err := t.decode(ctx, decode, &sub); err != nil {
		return nil, err
	}
	if sub.ChallengeID == "" || sub.Hash == "" {
		if err := t.open(ctx); err != nil {
			return nil, submitRefusal(t.Entry, err)
		}
		field := "challenge_id"
		if sub.ChallengeID != "" {
			field = "hash"
		}
		return nil, missing(field, "Submit {\"challenge_id\": \"…\", \"hash\": \"…\"}.")
	}
	reg, ch, err := t.s.challenges.OpenRegistrationChallenge(ctx, t.AgentID, t.Entry.ID, sub.ChallengeID)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, notRegisteredToSubmit(t.Entry)
	}
	if err != nil {
		return nil, err
	}
	if ch == nil {
		return nil, notFound("no such challenge", "Submit the challenge_id that start returned.")
	}
	if ch.AgentID != t.AgentID || ch.RegistrationID != reg.ID {
		return nil, forbidden("forbidden", "this challenge is not yours", "Submit your own challenge.")
	}
	if !ch.UsedAt.IsZero() {
		return nil, errChallengeUsed
	}
	if err := t.pin(ctx, reg); err != nil {
		return nil, err
	}
	now := t.s.now()
	shape := hexHash().MatchString(sub.Hash)
	g := grade{started: ch.CreatedAt, deadline: ch.ExpiresAt,
		inputs: map[string]any{"challenge_id": ch.ID, "hash": digest(sub.Hash)},
		output: []Check{{Name: "hash", Passed: shape, Message: "the hash is 64 hexadecimal digits"}}}
	switch {
	case now.After(ch.ExpiresAt):
		g.outcome, g.reason = OutcomeExpired, "answered after expires_at"
	case !CheckPoAW(ch, sub.Hash):
		g.reason = "the hash does not match the sorted values and nonce"
		g.goal = []Check{{Name: "hash_matches", Passed: false, Message: g.reason}}
	default:
		g.passed = true
		g.goal = []Check{{Name: "hash_matches", Passed: true, Message: "the hash matches the sorted values and nonce"}}
	}
	if !shape {
		g.output[0].Message = "the hash is not 64 hexadecimal digits"
	}
	res, points := t.s.newResult(t.Def, t.Reg, g, now)
	saved, err := t.s.challenges.AnswerChallenge(ctx, ch.ID, res, points)
	switch {
	case errors.Is(err, registry.ErrGone):
		return nil, errChallengeUsed
	case errors.Is(err, registry.ErrConflict):
		return nil, conflict("already_completed", "this registration already has its result", "Register again for another attempt.")
	case err != nil:
		return nil, err
	}
	return &Submitted{Result: saved}, nil
}

// Challenge returns a challenge to the agent it was made for, while it is
// neither used nor expired.
func (s *Service) Challenge(ctx context.Context, agentID, id string) (*Challenge, error) {
	ch, err := s.challenges.Challenge(ctx, id)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, notFound("no such challenge", "Start the evaluation to get a challenge.")
	}
	if err != nil {
		return nil, err
	}
	if ch.AgentID != agentID {
		return nil, forbidden("forbidden", "this challenge belongs to another agent", "Fetch your own challenge.")
	}
	if !ch.UsedAt.IsZero() || !s.now().Before(ch.ExpiresAt) {
		return nil, refuse(registry.ErrGone, "gone", "the challenge is used or expired", "Its attempt is over: register again for another (start with {\"register\": true} registers and starts).")
	}
	return ch, nil
}
