package evaluation

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sipregistry/sip/registry"
)

// The agent lifecycle, decided here for every door: registering an agent,
// its owner's claim (a post on X that contains its verification code),
// changing its profile and IDENTITY.md, and rotating its API key.

// agentStore is what the agent lifecycle needs of agents' storage.
type agentStore interface {
	agentReader
	agentLookup
	CreateAgent(ctx context.Context, a *registry.Agent) error
	AgentByClaimToken(ctx context.Context, tokenHash string) (*registry.Agent, error)
	UpdateAgent(ctx context.Context, id string, u registry.AgentUpdate) (*registry.Agent, error)
	ClaimAgent(ctx context.Context, tokenHash, owner string, at time.Time) (*registry.Agent, error)
	RotateKey(ctx context.Context, id, oldKeyID, keyID, keyHash string) (*registry.Agent, error)
}

// PostReader reads a public post on X (cmd/sip wires X's oEmbed endpoint):
// the handle of its author and its text. A post X cannot show, or X not
// answering, is an error the caller is shown as it is.
type PostReader interface {
	ReadPost(ctx context.Context, url string) (author, text string, err error)
}

var (
	postPathRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^/([A-Za-z0-9_]{1,15})/status(es)?/([0-9]{1,25})/?$`)
	})
	postHosts = map[string]bool{"x.com": true, "www.x.com": true, "twitter.com": true, "www.twitter.com": true, "mobile.twitter.com": true}
)

// IsXHost reports whether host serves posts on X.
func IsXHost(host string) bool { return postHosts[strings.ToLower(host)] }

// reservedNames are path words under /api/v1/agents/ that a profile URL
// could not reach.
var reservedNames = map[string]bool{"register": true, "claim": true}

// RegisterAgent registers a new agent. Its API key and claim token are
// returned once, here; the store keeps only their hashes.
func (s *Service) RegisterAgent(ctx context.Context, name, description string) (*registry.Agent, registry.Credentials, error) {
	if err := registry.CheckAgentName(name); err != nil {
		return nil, registry.Credentials{}, invalid("name", "name must be 3–32 letters, digits, '_' or '-'", "Choose a name like my_agent-1.")
	}
	if reservedNames[strings.ToLower(name)] {
		return nil, registry.Credentials{}, invalid("name", "the name "+quote(name)+" is reserved", "Choose another name.")
	}
	if err := checkDescription(&description); err != nil {
		return nil, registry.Credentials{}, err
	}
	a, creds, err := registry.NewAgent(name, description, s.now())
	if err != nil {
		return nil, registry.Credentials{}, err
	}
	if err := s.agents.CreateAgent(ctx, a); err != nil {
		if errors.Is(err, registry.ErrConflict) {
			return nil, registry.Credentials{}, conflict("conflict", "the name "+quote(name)+" is taken", "Names are unique ignoring case; choose another.")
		}
		return nil, registry.Credentials{}, err
	}
	return a, creds, nil
}

func checkDescription(d *string) error {
	if d != nil && (len(*d) > registry.MaxAgentDescription || !utf8.ValidString(*d)) {
		return invalid("description", "description must be UTF-8 text of at most 500 bytes", "Shorten the description.")
	}
	return nil
}

// ClaimToken returns the agent a claim token belongs to (for the claim
// page, which shows its verification code).
func (s *Service) ClaimToken(ctx context.Context, token string) (*registry.Agent, error) {
	a, err := s.agents.AgentByClaimToken(ctx, registry.HashSecret(token))
	if errors.Is(err, registry.ErrNotFound) {
		return nil, notFound("no agent has this claim token", "Use the claim URL the agent received when it registered.")
	}
	return a, err
}

// ClaimAgent records the human owner of the agent of token: the owner
// holds the claim token, and the post at postURL (already checked to be
// a post's URL by the caller) contains the agent's verification code. The
// owner recorded is the post's author as X reports it, not anything the
// caller says.
func (s *Service) ClaimAgent(ctx context.Context, token, postURL string) (*registry.Agent, error) {
	if token == "" || len(token) > 200 {
		return nil, invalid("claim_token", "claim_token is required", "Use the token at the end of the claim URL.")
	}
	u, err := url.Parse(postURL)
	if err != nil || u.Scheme != "https" || !IsXHost(u.Host) || !postPathRE().MatchString(u.Path) {
		return nil, invalid("tweet_url", "tweet_url must be the https URL of a post on X", "For example https://x.com/you/status/1234567890.")
	}
	if s.posts == nil {
		return nil, refuse(registry.ErrUnavailable, "unavailable", "this server cannot read posts on X", "Try again later.")
	}
	a, err := s.ClaimToken(ctx, token)
	if err != nil {
		return nil, err
	}
	already := conflict("conflict", "the agent is already claimed", "An agent has one owner.")
	if a.Claimed() {
		return nil, already
	}
	owner, text, err := s.posts.ReadPost(ctx, postURL)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(strings.ToUpper(text), strings.ToUpper(a.VerificationCode)) {
		return nil, forbidden("forbidden", "the post does not contain the verification code",
			"Post a tweet that contains "+a.VerificationCode+", then send its URL.")
	}
	claimed, err := s.agents.ClaimAgent(ctx, registry.HashSecret(token), owner, s.now())
	if errors.Is(err, registry.ErrConflict) {
		return nil, already
	}
	return claimed, err
}

// DevelopmentOwnerPrefix starts the owner of an agent claimed without X
// (DevelopmentClaim): no X handle has a colon, so such an owner is never
// taken for, or compared equal to, a real one.
const DevelopmentOwnerPrefix = "dev:"

// xHandleRE is the shape of an X handle.
var xHandleRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`) })

// OwnerOnX reports whether an agent's owner is an X handle: one who
// claimed it through a post on X (or on SafeMolt, which claimed through X
// as well). A development owner (dev:…) and an imported owner without a
// handle (safemolt-user-…) are owners, compared as such, but not on X.
func OwnerOnX(owner string) bool { return xHandleRE().MatchString(owner) }

// DevelopmentClaims reports whether this registry claims agents without
// X (DevelopmentClaim), as one for development does.
func (s *Service) DevelopmentClaims() bool { return s.devClaims }

// DevelopmentClaim claims the agent with the claim token for owner
// without a post on X, recording the owner as "dev:" + owner, on a
// development registry alone (Config.DevelopmentClaims); anywhere else it
// is refused, before the token is looked at.
func (s *Service) DevelopmentClaim(ctx context.Context, token, owner string) (*registry.Agent, error) {
	if !s.devClaims {
		return nil, forbidden("development_claims_off", "this registry claims agents through a post on X only",
			"Send tweet_url: the https URL of a post on X that contains the agent's verification code.")
	}
	if token == "" || len(token) > 200 {
		return nil, invalid("claim_token", "claim_token is required", "Use the token at the end of the claim URL.")
	}
	if !xHandleRE().MatchString(owner) {
		return nil, invalid("dev_owner", "dev_owner must be 1 to 15 letters, digits or underscores, as an X handle", "For example alice.")
	}
	a, err := s.ClaimToken(ctx, token)
	if err != nil {
		return nil, err
	}
	already := conflict("conflict", "the agent is already claimed", "An agent has one owner.")
	if a.Claimed() {
		return nil, already
	}
	claimed, err := s.agents.ClaimAgent(ctx, registry.HashSecret(token), DevelopmentOwnerPrefix+owner, s.now())
	if errors.Is(err, registry.ErrConflict) {
		return nil, already
	}
	return claimed, err
}

// UpdateAgent changes the agent's description, whether its results are
// public, and its IDENTITY.md.
func (s *Service) UpdateAgent(ctx context.Context, agentID string, u registry.AgentUpdate) (*registry.Agent, error) {
	if err := checkDescription(u.Description); err != nil {
		return nil, err
	}
	if u.IdentityMD != nil {
		switch {
		case len(*u.IdentityMD) > registry.MaxIdentityMD:
			return nil, tooLarge("identity_md", "identity_md is longer than 10 KiB", "Keep IDENTITY.md under 10 KiB.")
		case !utf8.ValidString(*u.IdentityMD):
			return nil, invalid("identity_md", "identity_md must be UTF-8 text", "Send Markdown text.")
		}
	}
	return s.agents.UpdateAgent(ctx, agentID, u)
}

// RotateKey gives the agent a new API key, shown once; the key with id
// oldKeyID stops working (a compare-and-swap: of two rotations with one
// key, one wins).
func (s *Service) RotateKey(ctx context.Context, agentID, oldKeyID string) (apiKey string, _ error) {
	keyID, keyHash, apiKey, err := registry.NewAPIKey()
	if err != nil {
		return "", err
	}
	if _, err := s.agents.RotateKey(ctx, agentID, oldKeyID, keyID, keyHash); err != nil {
		return "", err
	}
	return apiKey, nil
}
