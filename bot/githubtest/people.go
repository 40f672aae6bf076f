package githubtest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The fake as the App's users meet it: the App's user-to-server sign-in
// (/login/oauth/authorize, /login/oauth/access_token) and what a person's
// token may do: read their account, fork, make branches, commit files and
// open pull requests as themselves.

type userKey struct{}

// personWrites are the writes the fake takes from a person's token; the
// others (check runs, labels, merges, the App's comments) are the App's.
var personWrites = map[string]bool{
	"POST /repos/{owner}/{repo}/forks":             true,
	"POST /repos/{owner}/{repo}/git/refs":          true,
	"PUT /repos/{owner}/{repo}/contents/{path...}": true,
	"POST /repos/{owner}/{repo}/pulls":             true,
	"POST /repos/{owner}/{repo}/merge-upstream":    true,
}

// userOfLocked is the login of a person's token (f.mu held), or "".
func (f *Fake) userOfLocked(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		tok, _ = strings.CutPrefix(auth, "token ")
	}
	return f.userTokens[tok]
}

// SignInAs makes login the person signed in to GitHub in the browser: the
// authorize page sends them back to the App with a code at once.
func (f *Fake) SignInAs(login string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signedIn = login
	f.users[strings.ToLower(login)] = true
}

// DenyForks makes GitHub refuse to fork any repository for login.
func (f *Fake) DenyForks(login string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noForks[login] = true
}

// SetWebhook makes the fake deliver the App's webhook for every pull
// request opened through the API, signed with secret, to url.
func (f *Fake) SetWebhook(url, secret string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hookURL, f.hookSecret = url, secret
}

// Repo returns a repository by owner/name (nil when none).
func (f *Fake) Repo(fullName string) *Repo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.repos[fullName]
}

// Pulls lists a repository's pull requests, oldest first.
func (f *Fake) Pulls(r *Repo) []Pull {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Pull
	for n := 1; n < r.nextPull; n++ {
		if p := r.pulls[n]; p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// UserTokens lists the tokens the sign-in handed out.
func (f *Fake) UserTokens() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for t := range f.userTokens {
		out = append(out, t)
	}
	return out
}

// File is a file's content on a branch of a repository ("" when none).
func (f *Fake) File(r *Repo, branch, path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, _ := r.git.git("show", "refs/heads/"+branch+":"+path)
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (f *Fake) peopleRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /login/oauth/authorize", f.authorize)
	mux.HandleFunc("POST /login/oauth/access_token", f.oauthToken)
	mux.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		login := f.userOfLocked(r)
		f.mu.Unlock()
		if login == "" {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
			return
		}
		writeJSON(w, 200, map[string]any{"login": login, "type": "User"})
	})
}

// authorize is GitHub's authorization page for the App: the person signed
// in (SignInAs) is sent back at once, with a one-use code and the state.
func (f *Fake) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	if q.Get("client_id") != f.ClientID {
		http.Error(w, "The client_id is not that of an App", http.StatusNotFound)
		return
	}
	if f.signedIn == "" {
		http.Error(w, "Sign in to GitHub to continue", http.StatusUnauthorized)
		return
	}
	code := randomHex(10)
	f.codes[code] = oauthCode{login: f.signedIn, redirect: q.Get("redirect_uri")}
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || back.Scheme == "" {
		http.Error(w, "The redirect_uri is not valid", http.StatusBadRequest)
		return
	}
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

type oauthCode struct{ login, redirect string }

// oauthToken exchanges a code (once) for a person's token, as GitHub does:
// 200 with an error field for a bad code.
func (f *Fake) oauthToken(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.PostForm.Get("client_id") != f.ClientID || r.PostForm.Get("client_secret") != f.ClientSecret {
		writeJSON(w, 200, map[string]string{"error": "incorrect_client_credentials"})
		return
	}
	c, ok := f.codes[r.PostForm.Get("code")]
	delete(f.codes, r.PostForm.Get("code"))
	if !ok || (r.PostForm.Get("redirect_uri") != "" && r.PostForm.Get("redirect_uri") != c.redirect) {
		writeJSON(w, 200, map[string]string{"error": "bad_verification_code"})
		return
	}
	tok := "ghu_" + randomHex(18)
	f.userTokens[tok] = c.login
	writeJSON(w, 200, map[string]any{"access_token": tok, "token_type": "bearer", "scope": ""})
}

// canPush says whether login may push to rp: their own, or a write role.
func (f *Fake) canPush(login string, rp *Repo) bool {
	if login == "" {
		return false
	}
	switch f.roles[login] {
	case "admin", "maintain", "write":
		return true
	}
	return strings.EqualFold(rp.Owner, login)
}

// pushed answers 404 (as GitHub does) and reports false unless the
// request's person may push to rp or it comes from the App.
func (f *Fake) pushed(w http.ResponseWriter, r *http.Request, rp *Repo) bool {
	if login, ok := r.Context().Value(userKey{}).(string); ok && !f.canPush(login, rp) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return false
	}
	return true
}

func (f *Fake) fork(w http.ResponseWriter, r *http.Request, rp *Repo) {
	login, _ := r.Context().Value(userKey{}).(string)
	if login == "" {
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
		return
	}
	if f.noForks[login] {
		writeJSON(w, http.StatusForbidden, map[string]string{"message": "Forking is disabled for this repository for your account"})
		return
	}
	name := login + "/" + rp.Name
	fk := f.repos[name]
	if fk == nil {
		f.nextID++
		fk = &Repo{ID: f.nextID, Owner: login, Name: rp.Name, DefaultBranch: rp.DefaultBranch, pulls: map[int]*Pull{}, nextPull: 1, parent: rp}
		fk.git = newGitRepo(f.t, filepath.Join(f.root, login, rp.Name), rp.DefaultBranch)
		fk.git.must(f.t, "fetch", "-q", "--update-head-ok", rp.git.dir, "+refs/heads/"+rp.DefaultBranch+":refs/heads/"+rp.DefaultBranch)
		fk.git.must(f.t, "reset", "-q", "--hard", rp.DefaultBranch)
		f.repos[name] = fk
	}
	writeJSON(w, http.StatusAccepted, f.repoJSON(fk))
}

// mergeUpstream brings a fork's branch up to its parent's, as GitHub's
// "Sync fork" does: fast-forward, or 409 when the fork's branch has
// commits of its own.
func (f *Fake) mergeUpstream(w http.ResponseWriter, r *http.Request, rp *Repo) {
	if !f.pushed(w, r, rp) {
		return
	}
	var req struct{ Branch string }
	json.NewDecoder(r.Body).Decode(&req)
	if rp.parent == nil || rp.git.head(req.Branch) == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "This repository is not a fork, or the branch does not exist"})
		return
	}
	up := rp.parent.git.head(req.Branch)
	rp.git.git("fetch", "-q", rp.parent.git.dir, up)
	if _, err := rp.git.git("merge-base", "--is-ancestor", "refs/heads/"+req.Branch, up); err != nil {
		writeJSON(w, http.StatusConflict, map[string]string{"message": "There are merge conflicts"})
		return
	}
	rp.git.must(f.t, "checkout", "-q", req.Branch)
	rp.git.must(f.t, "merge", "-q", "--ff-only", up)
	f.forkSyncs++
	writeJSON(w, 200, map[string]any{"message": "Successfully fetched and fast-forwarded from upstream", "merge_type": "fast-forward", "base_branch": req.Branch})
}

// ForkSyncs counts the forks brought up to date from their parent.
func (f *Fake) ForkSyncs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.forkSyncs
}

func (f *Fake) getRef(w http.ResponseWriter, r *http.Request, rp *Repo) {
	ref := r.PathValue("ref")
	sha, _ := rp.git.git("rev-parse", "--verify", "-q", "refs/"+ref)
	if sha == "" {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	writeJSON(w, 200, map[string]any{"ref": "refs/" + ref, "object": map[string]any{"sha": sha, "type": "commit"}})
}

func (f *Fake) createRef(w http.ResponseWriter, r *http.Request, rp *Repo) {
	if !f.pushed(w, r, rp) {
		return
	}
	var req struct{ Ref, SHA string }
	if json.NewDecoder(r.Body).Decode(&req) != nil || !strings.HasPrefix(req.Ref, "refs/") || len(req.SHA) != 40 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Invalid request"})
		return
	}
	if sha, _ := rp.git.git("rev-parse", "--verify", "-q", req.Ref); sha != "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Reference already exists"})
		return
	}
	if _, err := rp.git.git("cat-file", "-e", req.SHA+"^{commit}"); err != nil && rp.parent != nil {
		// A fork shares its network's objects.
		rp.git.git("fetch", "-q", rp.parent.git.dir, req.SHA)
	}
	if _, err := rp.git.git("update-ref", req.Ref, req.SHA); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Object does not exist"})
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"ref": req.Ref, "object": map[string]any{"sha": req.SHA, "type": "commit"}})
}

func (f *Fake) putContents(w http.ResponseWriter, r *http.Request, rp *Repo) {
	if !f.pushed(w, r, rp) {
		return
	}
	var req struct{ Message, Content, Branch, SHA string }
	if json.NewDecoder(r.Body).Decode(&req) != nil || req.Message == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Invalid request"})
		return
	}
	content, err := base64.StdEncoding.DecodeString(req.Content)
	if err != nil || len(content) == 0 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "content is not valid Base64"})
		return
	}
	branch := cmpOr(req.Branch, rp.DefaultBranch)
	if rp.git.head(branch) == "" {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Branch " + branch + " not found"})
		return
	}
	p := r.PathValue("path")
	existing, _ := rp.git.git("rev-parse", "--verify", "-q", "refs/heads/"+branch+":"+p)
	switch {
	case existing != "" && req.SHA == "":
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": `Invalid request. "sha" wasn't supplied.`})
		return
	case existing != "" && req.SHA != existing:
		writeJSON(w, http.StatusConflict, map[string]string{"message": p + " does not match " + req.SHA})
		return
	}
	sha := rp.git.commit(f.t, branch, "", map[string]string{p: string(content)}, req.Message)
	blob, _ := rp.git.git("rev-parse", sha+":"+p)
	status := http.StatusOK
	if existing == "" {
		status = http.StatusCreated
	}
	writeJSON(w, status, map[string]any{"content": map[string]any{"path": p, "sha": blob}, "commit": map[string]any{"sha": sha}})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// createPull opens a pull request as the token's person (or the App).
func (f *Fake) createPull(w http.ResponseWriter, r *http.Request, rp *Repo) {
	login, _ := r.Context().Value(userKey{}).(string)
	if login == "" {
		login = f.AppSlug + "[bot]"
	}
	var req struct {
		Title, Head, Base, Body string
		Draft                   bool
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || req.Title == "" || req.Head == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
		return
	}
	hr, branch := rp, req.Head
	if owner, b, ok := strings.Cut(req.Head, ":"); ok {
		hr, branch = f.repos[owner+"/"+rp.Name], b
		if hr == nil || (hr != rp && hr.parent != rp) {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed: head is not a fork of the base"})
			return
		}
	}
	base := cmpOr(req.Base, rp.DefaultBranch)
	head := hr.git.head(branch)
	if head == "" || rp.git.head(base) == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed: head or base does not exist"})
		return
	}
	for _, p := range rp.pulls {
		if p.State == "open" && p.HeadRef == branch && p.headRepo == hr {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "A pull request already exists for " + req.Head + "."})
			return
		}
	}
	pr := &Pull{Number: rp.nextPull, Author: login, HeadRef: branch, BaseRef: base, State: "open", Title: req.Title, Draft: req.Draft,
		headSHA: head, baseSHA: rp.git.head(base), body: req.Body, headRepo: hr}
	rp.nextPull++
	if hr != rp {
		// GitHub keeps a pull request's head in the base repository too.
		rp.git.must(f.t, "fetch", "-q", hr.git.dir, "+refs/heads/"+branch+":refs/pull/"+strconv.Itoa(pr.Number)+"/head")
	}
	rp.pulls[pr.Number] = pr
	out := f.pullJSON(rp, pr)
	writeJSON(w, http.StatusCreated, out)
	if f.hookURL != "" {
		payload := map[string]any{"action": "opened", "number": pr.Number, "pull_request": out, "repository": f.repoJSON(rp),
			"installation": map[string]any{"id": rp.Installation}, "sender": map[string]any{"login": login}}
		go f.deliver(f.hookURL, f.hookSecret, "pull_request", payload)
	}
}

// deliver posts a webhook as GitHub does, signed.
func (f *Fake) deliver(to, secret, event string, payload any) {
	body, _ := json.Marshal(payload)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, to, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", randomHex(16))
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// Pull is a repository's pull request by number (nil when none), for
// AddReview, Merge and the like.
func (f *Fake) Pull(r *Repo, number int) *Pull {
	f.mu.Lock()
	defer f.mu.Unlock()
	return r.pulls[number]
}
