// Package githubtest is an in-process fake of the parts of GitHub the App
// uses: the REST endpoints (over httptest, with real App JWTs and
// installation tokens) and real git repositories served over HTTP by git
// http-backend. Tests drive it like GitHub: open pull requests, push,
// review, merge, and inject faults (5xx, rate limits, a failing token
// endpoint).
package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
)

// Fake is a fake GitHub for one App.
type Fake struct {
	URL        string // the REST API base (and the git host)
	AppID      int64
	AppSlug    string
	PrivateKey []byte // the App's PEM key, for the App under test
	// ClientID and ClientSecret are the App's OAuth credentials, for its
	// user-to-server sign-in.
	ClientID, ClientSecret string

	t    testing.TB
	key  *rsa.PrivateKey
	srv  *httptest.Server
	root string
	git  http.Handler

	mu            sync.Mutex
	repos         map[string]*Repo // by "owner/name"
	tokens        map[string]int64 // installation token → installation
	nextID        int64
	checkRuns     []*CheckRun
	comments      []*Comment
	issues        []*Issue
	teams         map[string]map[string]string // "org/slug" → login → state
	roles         map[string]string            // login → role_name on every repository
	users         map[string]bool              // logins that exist
	deliveries    []Delivery
	redelivered   []int64
	requests      []Request
	faults        []fault
	holds         []*hold
	tokenRequests int
	manifests     map[string]manifestApp // App manifest flow: one-use code → the App it creates
	userTokens    map[string]string      // a person's token (user-to-server) → login
	codes         map[string]oauthCode   // sign-in codes, used once
	signedIn      string                 // the person signed in to GitHub in the browser
	noForks       map[string]bool        // logins GitHub refuses to fork for
	hookURL       string                 // where pull requests opened through the API are delivered
	hookSecret    string
	forkSyncs     int
}

// Repo is a repository of the fake.
type Repo struct {
	ID            int64
	Owner, Name   string
	DefaultBranch string
	Installation  int64
	git           *gitRepo
	pulls         map[int]*Pull
	nextPull      int
	parent        *Repo // the repository a fork was made from
}

// FullName is owner/name.
func (r *Repo) FullName() string { return r.Owner + "/" + r.Name }

// Pull is a pull request of the fake.
type Pull struct {
	Number           int
	Author           string
	HeadRef          string
	BaseRef          string
	State            string // open, closed
	Merged           bool
	MergedAt         time.Time
	MergeCommitSHA   string
	Labels           []string
	Reviews          []Review
	Title            string
	Draft            bool
	headSHA, baseSHA string
	headRepo         *Repo // a fork's, for a pull request from a fork
	body             string
	association      string
}

// Review is a pull-request review.
type Review struct {
	ID          int64
	User        string
	State       string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED
	CommitID    string
	SubmittedAt time.Time
}

// CheckRun is a check run the App created, with everything it sent.
type CheckRun struct {
	ID          int64            `json:"id"`
	Repo        string           `json:"-"`
	HeadSHA     string           `json:"head_sha"`
	Name        string           `json:"name"`
	Status      string           `json:"status"`
	Conclusion  string           `json:"conclusion,omitempty"`
	ExternalID  string           `json:"external_id,omitempty"`
	Title       string           `json:"-"`
	Summary     string           `json:"-"`
	Annotations []map[string]any `json:"-"`
	Updates     int              `json:"-"`
}

// Comment is an issue comment.
type Comment struct {
	ID    int64
	Repo  string
	Issue int
	Body  string
	User  string
	Edits int
}

// Issue is an issue (not a pull request) of the fake.
type Issue struct {
	Number int
	Repo   string
	Title  string
	Body   string
	State  string // open, closed
	Labels []string
	Edits  int
}

// Delivery is a webhook delivery as GitHub lists it for the App.
type Delivery struct {
	ID          int64     `json:"id"`
	GUID        string    `json:"guid"`
	DeliveredAt time.Time `json:"delivered_at"`
	StatusCode  int       `json:"status_code"`
	Status      string    `json:"status"`
	Event       string    `json:"event"`
}

// Request is a request the fake received.
type Request struct {
	Method, Path string
	Status       int
}

type fault struct {
	match  func(*http.Request) bool
	status int
	header http.Header
	left   int
}

// New starts a fake GitHub with a new App key; it stops with the test.
func New(t testing.TB) *Fake {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("the fake GitHub needs git: %v", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := &Fake{t: t, key: key, PrivateKey: pemKey, AppID: 4242, AppSlug: "sip-registry", root: t.TempDir(),
		repos: map[string]*Repo{}, tokens: map[string]int64{}, nextID: 1000, teams: map[string]map[string]string{}, roles: map[string]string{}, users: map[string]bool{},
		ClientID: "Iv1.fakeclient", ClientSecret: "fake-client-secret", userTokens: map[string]string{}, codes: map[string]oauthCode{}, noForks: map[string]bool{}}
	f.git = &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + f.root, "GIT_HTTP_EXPORT_ALL=1"}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.URL = f.srv.URL
	t.Cleanup(f.srv.Close)
	return f
}

// CreateRepo creates a repository with one commit on its default branch
// and installs the App on it (installation 1 unless given).
func (f *Fake) CreateRepo(owner, name string, files map[string]string, installation ...int64) *Repo {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	inst := int64(1)
	if len(installation) > 0 {
		inst = installation[0]
	}
	r := &Repo{ID: f.nextID, Owner: owner, Name: name, DefaultBranch: "main", Installation: inst, pulls: map[int]*Pull{}, nextPull: 1}
	r.git = newGitRepo(f.t, filepath.Join(f.root, owner, name), r.DefaultBranch)
	r.git.commit(f.t, r.DefaultBranch, "", files, "Initial commit")
	f.repos[r.FullName()] = r
	return r
}

// CloneURL is where git fetches the repository.
func (f *Fake) CloneURL(r *Repo) string { return f.URL + "/git/" + r.Owner + "/" + r.Name + "/.git" }

// Push commits files on a branch (created from the default branch when
// new) and returns the commit; open pull requests from the branch move
// to it.
func (f *Fake) Push(r *Repo, branch string, files map[string]string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	sha := r.git.commit(f.t, branch, r.DefaultBranch, files, "Change "+branch)
	for _, p := range r.pulls {
		if p.State == "open" && p.HeadRef == branch {
			p.headSHA = sha
		}
	}
	return sha
}

// Head is a branch's commit.
func (f *Fake) Head(r *Repo, branch string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return r.git.head(branch)
}

// OpenPull opens a pull request from branch into the default branch.
func (f *Fake) OpenPull(r *Repo, branch, author string) *Pull {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := &Pull{Number: r.nextPull, Author: author, HeadRef: branch, BaseRef: r.DefaultBranch, State: "open",
		headSHA: r.git.head(branch), baseSHA: r.git.head(r.DefaultBranch)}
	r.nextPull++
	r.pulls[p.Number] = p
	f.users[strings.ToLower(author)] = true
	return p
}

// HeadSHA is a pull request's head commit.
func (f *Fake) HeadSHA(p *Pull) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return p.headSHA
}

// AddReview records a review of a pull request's current head.
func (f *Fake) AddReview(p *Pull, user, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	f.users[strings.ToLower(user)] = true
	p.Reviews = append(p.Reviews, Review{ID: f.nextID, User: user, State: state, CommitID: p.headSHA, SubmittedAt: time.Now()})
}

// Merge merges a pull request into its base with a merge commit and
// returns the commit.
func (f *Fake) Merge(r *Repo, p *Pull) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r.git.must(f.t, "checkout", "-q", p.BaseRef)
	r.git.must(f.t, "merge", "-q", "--no-ff", "-m", fmt.Sprintf("Merge pull request #%d", p.Number), p.headSHA)
	p.State, p.Merged, p.MergeCommitSHA, p.MergedAt = "closed", true, r.git.head(p.BaseRef), time.Now()
	return p.MergeCommitSHA
}

// SetTeam makes login a member of org/slug with state (active, pending).
func (f *Fake) SetTeam(team, login, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.teams[team] == nil {
		f.teams[team] = map[string]string{}
	}
	f.teams[team][login] = state
	f.users[strings.ToLower(login)] = true
}

// AddTeam makes a team (org/slug) exist, with no members yet.
func (f *Fake) AddTeam(team string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.teams[team] == nil {
		f.teams[team] = map[string]string{}
	}
}

// AddUsers makes GitHub users exist (those given a role or a team, authors
// and reviewers of pull requests exist already).
func (f *Fake) AddUsers(logins ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range logins {
		f.users[strings.ToLower(l)] = true
	}
}

// UpdateBranch merges the base branch into a pull request's branch, as
// GitHub's "Update branch" button does, and returns the new head.
func (f *Fake) UpdateBranch(r *Repo, p *Pull) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r.git.must(f.t, "checkout", "-q", p.HeadRef)
	r.git.must(f.t, "merge", "-q", "--no-ff", "-m", "Merge branch '"+p.BaseRef+"' into "+p.HeadRef, p.BaseRef)
	p.headSHA = r.git.head(p.HeadRef)
	return p.headSHA
}

// SetRole gives login a role (admin, maintain, write, triage, read).
func (f *Fake) SetRole(login, role string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.roles[login] = role
	f.users[strings.ToLower(login)] = true
}

// AddDelivery lists a webhook delivery for the App (for redelivery).
func (f *Fake) AddDelivery(guid, event string, statusCode int, at time.Time) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	status := "OK"
	if statusCode < 200 || statusCode > 299 {
		status = "failed"
	}
	f.deliveries = append([]Delivery{{ID: f.nextID, GUID: guid, DeliveredAt: at, StatusCode: statusCode, Status: status, Event: event}}, f.deliveries...)
	return f.nextID
}

// Redelivered lists the delivery ids the App asked to redeliver.
func (f *Fake) Redelivered() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.redelivered...)
}

// Fail makes the next n API requests that match answer status with the
// given headers (n < 0: until Heal).
func (f *Fake) Fail(n, status int, header http.Header, match func(*http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if match == nil {
		match = func(*http.Request) bool { return true }
	}
	f.faults = append(f.faults, fault{match: match, status: status, header: header, left: n})
}

// Hold makes the next API request that matches wait until release is
// called (or the fake closes); held says when it has arrived. Tests use it
// to act while the App is in the middle of its work.
func (f *Fake) Hold(match func(*http.Request) bool) (held <-chan struct{}, release func()) {
	arrived, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.mu.Lock()
	f.holds = append(f.holds, &hold{match: match, arrived: arrived, gate: gate})
	f.mu.Unlock()
	return arrived, func() { once.Do(func() { close(gate) }) }
}

// hold is a request pattern that waits at a gate.
type hold struct {
	match   func(*http.Request) bool
	arrived chan struct{}
	gate    chan struct{}
	taken   bool
}

// wait holds r if a hold matches it, once.
func (f *Fake) wait(r *http.Request) {
	f.mu.Lock()
	var h *hold
	for _, c := range f.holds {
		if !c.taken && c.match(r) {
			c.taken, h = true, c
			break
		}
	}
	f.mu.Unlock()
	if h == nil {
		return
	}
	close(h.arrived)
	select {
	case <-h.gate:
	case <-r.Context().Done():
	}
}

// Heal removes every fault.
func (f *Fake) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = nil
}

// CheckRuns lists the check runs on a commit with a name, oldest first.
func (f *Fake) CheckRuns(sha, name string) []CheckRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []CheckRun
	for _, c := range f.checkRuns {
		if c.HeadSHA == sha && c.Name == name {
			out = append(out, *c)
		}
	}
	return out
}

// Comments lists the comments on an issue or pull request.
func (f *Fake) Comments(r *Repo, issue int) []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Comment
	for _, c := range f.comments {
		if c.Repo == r.FullName() && c.Issue == issue {
			out = append(out, *c)
		}
	}
	return out
}

// Labels lists a pull request's labels.
func (f *Fake) Labels(p *Pull) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), p.Labels...)
}

// Requests lists the requests received so far.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// TokenRequests counts installation tokens minted.
func (f *Fake) TokenRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenRequests
}

func (f *Fake) newToken(installation int64) (string, time.Time) {
	b := make([]byte, 20)
	rand.Read(b)
	tok := "ghs_" + hex.EncodeToString(b)
	f.tokens[tok] = installation
	return tok, time.Now().Add(time.Hour)
}

// verifyJWT checks an App JWT: RS256, signed by the App's key, issued to
// the App, not expired, at most ten minutes long.
func (f *Fake) verifyJWT(auth string) bool {
	raw, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return false
	}
	claims := &jwt.RegisteredClaims{}
	tok, err := jwt.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		if t.Method != jwt.SigningMethodRS256 {
			return nil, fmt.Errorf("unexpected signing method %v", t.Header["alg"])
		}
		return &f.key.PublicKey, nil
	})
	if err != nil || !tok.Valid || claims.Issuer != strconv.FormatInt(f.AppID, 10) {
		return false
	}
	return claims.ExpiresAt != nil && claims.IssuedAt != nil && claims.ExpiresAt.Sub(claims.IssuedAt.Time) <= 10*time.Minute
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Close closes a pull request without merging it.
func (f *Fake) Close(r *Repo, p *Pull) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p.State = "closed"
}

// SetInstalled installs the App on a repository (installation id) or, with
// 0, removes it, as a user would on GitHub.
func (f *Fake) SetInstalled(r *Repo, installation int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r.Installation = installation
}

// UserToken is a token that reads and writes r as a person with access to
// it would (for the CLI's own calls).
func (f *Fake) UserToken(r *Repo) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	tok, _ := f.newToken(r.Installation)
	return tok
}

// Issues lists a repository's issues (not pull requests), oldest first.
func (f *Fake) Issues(r *Repo) []Issue {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Issue
	for _, i := range f.issues {
		if i.Repo == r.FullName() {
			out = append(out, *i)
		}
	}
	return out
}

// CommentAs posts a comment on an issue or pull request as a user (the App
// posts its own through the API) and returns it.
func (f *Fake) CommentAs(r *Repo, issue int, user, body string) Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	c := &Comment{ID: f.nextID, Repo: r.FullName(), Issue: issue, Body: body, User: user}
	f.comments = append(f.comments, c)
	f.users[strings.ToLower(user)] = true
	return *c
}

// SetPull sets a pull request's description and its author's association
// with the repository (CONTRIBUTOR when empty; FIRST_TIME_CONTRIBUTOR for
// a newcomer).
func (f *Fake) SetPull(p *Pull, body, association string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p.body, p.association = body, association
}

// MergeGroup builds a merge queue's group for a pull request: a branch
// gh-readonly-queue/<base>/pr-<n>-<base sha> holding the base branch with
// the pull request merged. It returns the group's commit, its base commit
// and its full ref.
func (f *Fake) MergeGroup(r *Repo, p *Pull) (head, base, ref string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	base = r.git.head(p.BaseRef)
	branch := fmt.Sprintf("gh-readonly-queue/%s/pr-%d-%s", p.BaseRef, p.Number, base)
	r.git.must(f.t, "checkout", "-q", "-B", branch, base)
	r.git.must(f.t, "merge", "-q", "--no-ff", "-m", fmt.Sprintf("Merge pull request #%d into the queue", p.Number), p.headSHA)
	return r.git.head(branch), base, "refs/heads/" + branch
}
