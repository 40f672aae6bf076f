// Package proposal is the contribution editor's service: people sign in
// with GitHub, keep drafts on the server, and open pull requests as
// themselves. Every rule of it is here: how long a sign-in and a session
// last, that a sign-in's state is used once, that a person's token is
// stored only sealed (AES-GCM under the server's session key, bound to
// its session), and how many drafts of what size a person keeps.
package proposal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sipregistry/sip/registry"
)

// Limits of the service; Config's zero values take these.
const (
	DefaultSessionTTL    = 8 * time.Hour // as long as GitHub's expiring user tokens live
	DefaultSignInTTL     = 10 * time.Minute
	DefaultMaxDrafts     = 20
	DefaultMaxDraftBytes = 256 << 10
)

// Config is what the service is built from.
type Config struct {
	Store  registry.EditorStore
	GitHub GitHub
	// Key seals people's tokens: 32 bytes (SIP_SESSION_KEY).
	Key []byte
	// Owner and Repo name the repository pull requests are for; Dir is
	// its SIP folder ("evaluations" when empty).
	Owner, Repo, Dir string
	// SignInOrigin is the scheme://host of GitHub's sign-in page.
	SignInOrigin  string
	Now           func() time.Time
	SessionTTL    time.Duration // how long a signed-in session lasts
	SignInTTL     time.Duration // how long a sign-in may take
	MaxDrafts     int           // drafts per person
	MaxDraftBytes int           // the size of one draft
}

// Service is the contribution editor's service.
type Service struct {
	cfg  Config
	aead cipher.AEAD
}

// New builds the service; a key that is not 32 bytes is refused.
func New(cfg Config) (*Service, error) {
	if len(cfg.Key) != 32 {
		return nil, fmt.Errorf("the session key must be 32 bytes, not %d", len(cfg.Key))
	}
	if cfg.Store == nil || cfg.GitHub == nil || cfg.Owner == "" || cfg.Repo == "" {
		return nil, errors.New("the contribution service needs a store, GitHub and the repository")
	}
	block, err := aes.NewCipher(cfg.Key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if cfg.Dir == "" {
		cfg.Dir = registry.DefaultDir
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.SessionTTL = or(cfg.SessionTTL, DefaultSessionTTL)
	cfg.SignInTTL = or(cfg.SignInTTL, DefaultSignInTTL)
	cfg.MaxDrafts = or(cfg.MaxDrafts, DefaultMaxDrafts)
	cfg.MaxDraftBytes = or(cfg.MaxDraftBytes, DefaultMaxDraftBytes)
	return &Service{cfg: cfg, aead: aead}, nil
}

func or[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// ParseKey reads a session key: 32 bytes written in base64 (as `openssl
// rand -base64 32` prints them) or hex. The error never repeats the key.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, dec := range []func(string) ([]byte, error){base64.StdEncoding.DecodeString, base64.RawStdEncoding.DecodeString,
		base64.URLEncoding.DecodeString, base64.RawURLEncoding.DecodeString, hex.DecodeString} {
		if k, err := dec(s); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	return nil, errors.New("want 32 random bytes in base64 (openssl rand -base64 32) or hex")
}

// Repository is owner/name of the repository pull requests are for.
func (s *Service) Repository() string { return s.cfg.Owner + "/" + s.cfg.Repo }

// SignInOrigin is the scheme://host of GitHub's sign-in page.
func (s *Service) SignInOrigin() string { return s.cfg.SignInOrigin }

// Dir is the repository's SIP folder.
func (s *Service) Dir() string { return s.cfg.Dir }

// MaxDraftBytes is the size of one draft (and of a proposed file).
func (s *Service) MaxDraftBytes() int { return s.cfg.MaxDraftBytes }

// hash is how a browser's value is found: never stored itself.
func hash(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// BeginSignIn starts a sign-in: a new state, kept (by its hash) for
// SignInTTL, to bind to the browser, and GitHub's page to send it to.
// The editor's form in progress travels with it (carry, empty for none):
// kept sealed in the sign-in's own row, within MaxDraftBytes, and saved as
// a draft of the person who finishes the sign-in.
func (s *Service) BeginSignIn(ctx context.Context, redirectURI string, carry Draft) (state, authorizeURL string, err error) {
	var sealed []byte
	if carry.Content != "" {
		if n := len(carry.Content) + len(carry.Title); n > s.cfg.MaxDraftBytes {
			return "", "", fmt.Errorf("the form is %d bytes, over the limit of a draft, %d: %w", n, s.cfg.MaxDraftBytes, registry.ErrTooLarge)
		}
		if sealed, err = json.Marshal(carried{ID: carry.ID, Title: carry.Title, Mode: carry.Mode, Edit: carry.Edit, Content: carry.Content}); err != nil {
			return "", "", err
		}
	}
	state = random()
	now := s.cfg.Now()
	// Sign-ins never finished and sessions past their time go here.
	if err := s.cfg.Store.DeleteEditorSessions(ctx, "", now); err != nil {
		return "", "", err
	}
	pending := registry.EditorSession{IDHash: hash(state), CreatedAt: now, ExpiresAt: now.Add(s.cfg.SignInTTL)}
	if sealed != nil {
		pending.Token = s.seal(formData+pending.IDHash, string(sealed))
	}
	if err := s.cfg.Store.CreateEditorSession(ctx, pending); err != nil {
		return "", "", err
	}
	return state, s.cfg.GitHub.AuthorizeURL(state, redirectURI), nil
}

// formData prefixes the additional data a carried form is sealed with, so
// that it never opens as a token (nor a token as a form).
const formData = "form:"

// carried is the form a sign-in carries, as sealed.
type carried struct {
	ID      string `json:"id,omitempty"`
	Title   string `json:"title"`
	Mode    string `json:"mode"`
	Edit    string `json:"edit,omitempty"`
	Content string `json:"content"`
}

// ErrSignIn is a sign-in callback whose state is not one this server
// began, was used already, or expired.
var ErrSignIn = fmt.Errorf("this sign-in was not started here, was used already, or took too long: %w", registry.ErrGone)

// SignedIn is a finished sign-in.
type SignedIn struct {
	Session string // the session's value, for the browser
	Login   string
	// Form is the form the sign-in carried (nil when none); its ID is the
	// draft it was saved as, empty when it could not be (NotSaved says why).
	Form     *Draft
	NotSaved error
}

// FinishSignIn completes a sign-in: the state is taken (once), the code
// exchanged for the person's token, and a session made, its token sealed.
// The form the sign-in carried becomes the person's draft: the one it was
// saved as already when that is theirs, else a new one.
func (s *Service) FinishSignIn(ctx context.Context, state, code, redirectURI string) (SignedIn, error) {
	now := s.cfg.Now()
	pending, err := s.cfg.Store.TakeEditorSession(ctx, hash(state), now)
	if errors.Is(err, registry.ErrNotFound) || err == nil && pending.Login != "" {
		return SignedIn{}, ErrSignIn
	}
	if err != nil {
		return SignedIn{}, err
	}
	var form *Draft
	if len(pending.Token) > 0 {
		plain, err := s.open(formData+pending.IDHash, pending.Token)
		if err != nil {
			return SignedIn{}, ErrSignIn // sealed under another key: begun before a rotation
		}
		var c carried
		if err := json.Unmarshal([]byte(plain), &c); err != nil {
			return SignedIn{}, fmt.Errorf("the form a sign-in carried: %w", err)
		}
		form = &Draft{ID: c.ID, Title: c.Title, Mode: c.Mode, Edit: c.Edit, Content: c.Content}
	}
	token, err := s.cfg.GitHub.Exchange(ctx, code, redirectURI)
	if err != nil {
		return SignedIn{}, err
	}
	login, err := s.cfg.GitHub.Login(ctx, token)
	if err != nil {
		return SignedIn{}, err
	}
	session := random()
	es := registry.EditorSession{IDHash: hash(session), Login: login, CreatedAt: now, ExpiresAt: now.Add(s.cfg.SessionTTL)}
	es.Token = s.seal(es.IDHash, token)
	if err := s.cfg.Store.CreateEditorSession(ctx, es); err != nil {
		return SignedIn{}, err
	}
	in := SignedIn{Session: session, Login: login, Form: form}
	if form != nil {
		id, err := s.saveDraft(ctx, login, *form)
		if errors.Is(err, registry.ErrNotFound) && form.ID != "" {
			// Another person's draft, or deleted: a new one.
			form.ID = ""
			id, err = s.saveDraft(ctx, login, *form)
		}
		switch {
		case errors.Is(err, registry.ErrDraftLimit), errors.Is(err, registry.ErrTooLarge):
			form.ID, in.NotSaved = "", err
		case err != nil:
			return SignedIn{}, err
		default:
			form.ID = id
		}
	}
	return in, nil
}

// seal encrypts a token for its session: the session's hash is the
// additional data, so a sealed token moved to another row does not open.
func (s *Service) seal(idHash, token string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, []byte(token), []byte(idHash))
}

func (s *Service) open(data string, sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", fmt.Errorf("the session holds no token: %w", registry.ErrUnauthorized)
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(data))
	if err != nil {
		// Another session key (rotated): the person signs in again.
		return "", fmt.Errorf("the session's token does not open with this server's key: %w", registry.ErrUnauthorized)
	}
	return string(plain), nil
}

// ErrSignedOut is a request without a live session.
var ErrSignedOut = fmt.Errorf("not signed in, or the sign-in expired: %w", registry.ErrUnauthorized)

// Person is the signed-in person of a session, or ErrSignedOut.
func (s *Service) Person(ctx context.Context, session string) (string, error) {
	es, err := s.session(ctx, session)
	return es.Login, err
}

func (s *Service) session(ctx context.Context, session string) (registry.EditorSession, error) {
	if session == "" {
		return registry.EditorSession{}, ErrSignedOut
	}
	es, err := s.cfg.Store.EditorSession(ctx, hash(session), s.cfg.Now())
	if errors.Is(err, registry.ErrNotFound) || err == nil && es.Login == "" {
		return registry.EditorSession{}, ErrSignedOut
	}
	return es, err
}

// token is the session's person and their token.
func (s *Service) token(ctx context.Context, session string) (string, string, error) {
	es, err := s.session(ctx, session)
	if err != nil {
		return "", "", err
	}
	tok, err := s.open(es.IDHash, es.Token)
	return es.Login, tok, err
}

// SignOut ends a session (and sweeps expired ones).
func (s *Service) SignOut(ctx context.Context, session string) error {
	return s.cfg.Store.DeleteEditorSessions(ctx, hash(session), s.cfg.Now())
}
