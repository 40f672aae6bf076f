package githubtest

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w, status: 200}
	defer func() {
		f.mu.Lock()
		f.requests = append(f.requests, Request{Method: r.Method, Path: r.URL.Path, Status: sw.status})
		f.mu.Unlock()
	}()
	if strings.HasPrefix(r.URL.Path, "/git/") {
		f.serveGit(sw, r)
		return
	}
	f.wait(r)
	if f.injectFault(sw, r) {
		return
	}
	f.routes().ServeHTTP(sw, r)
}

// injectFault answers with the first matching fault, if any.
func (f *Fake) injectFault(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	var hit *fault
	for i := range f.faults {
		ft := &f.faults[i]
		if ft.left != 0 && ft.match(r) {
			if ft.left > 0 {
				ft.left--
			}
			hit = ft
			break
		}
	}
	f.mu.Unlock()
	if hit == nil {
		return false
	}
	for k, v := range hit.header {
		w.Header()[k] = v
	}
	body := map[string]any{"message": http.StatusText(hit.status)}
	if hit.header.Get("Retry-After") != "" && hit.status == http.StatusForbidden {
		body = map[string]any{"message": "You have exceeded a secondary rate limit.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}
	}
	writeJSON(w, hit.status, body)
	return true
}

// serveGit serves a repository to a client that presents an installation
// token of the installation the repository belongs to.
func (f *Fake) serveGit(w http.ResponseWriter, r *http.Request) {
	user, pass, _ := r.BasicAuth()
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/git/"), "/", 3)
	f.mu.Lock()
	inst, okTok := f.tokens[pass]
	var repo *Repo
	if len(parts) == 3 {
		repo = f.repos[parts[0]+"/"+parts[1]]
	}
	allowed := repo != nil && repo.Installation == inst
	f.mu.Unlock()
	if user != "x-access-token" || !okTok || !allowed {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = strings.TrimPrefix(r.URL.Path, "/git")
	f.git.ServeHTTP(w, r2)
}

// installationOf authenticates an installation token.
func (f *Fake) installationOf(r *http.Request) (int64, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
	if !ok {
		return 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.tokens[tok]
	return id, ok
}

func (f *Fake) routes() *http.ServeMux {
	mux := http.NewServeMux()
	app := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if !f.verifyJWT(r.Header.Get("Authorization")) {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "A JSON web token could not be decoded"})
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", app(f.accessToken))
	mux.HandleFunc("GET /app", app(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": f.AppID, "slug": f.AppSlug, "name": "SIP registry"})
	}))
	mux.HandleFunc("GET /app/installations", app(f.listInstallations))
	mux.HandleFunc("GET /app/hook/deliveries", app(f.listDeliveries))
	mux.HandleFunc("POST /app/hook/deliveries/{id}/attempts", app(f.redeliver))
	mux.HandleFunc("GET /installation/repositories", f.installationRepositories)
	f.manifestRoutes(mux)

	repo := func(h func(http.ResponseWriter, *http.Request, *Repo)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			inst, ok := f.installationOf(r)
			f.mu.Lock()
			defer f.mu.Unlock()
			// A person's token reads every (public) repository; what it
			// may change, the handler decides.
			login := f.userOfLocked(r)
			if !ok && login == "" {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
				return
			}
			rp := f.repos[r.PathValue("owner")+"/"+r.PathValue("repo")]
			if login != "" && rp != nil {
				if r.Method != http.MethodGet && !personWrites[r.Pattern] {
					writeJSON(w, http.StatusForbidden, map[string]string{"message": "Resource not accessible by integration"})
					return
				}
				h(w, r.WithContext(context.WithValue(r.Context(), userKey{}, login)), rp)
				return
			}
			if rp == nil || rp.Installation != inst {
				writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
				return
			}
			h(w, r, rp)
		}
	}
	const p = "/repos/{owner}/{repo}"
	mux.HandleFunc("GET "+p, repo(func(w http.ResponseWriter, r *http.Request, rp *Repo) {
		out := f.repoJSON(rp)
		if login, ok := r.Context().Value(userKey{}).(string); ok {
			out["permissions"] = map[string]bool{"pull": true, "push": f.canPush(login, rp)}
		}
		writeJSON(w, 200, out)
	}))
	mux.HandleFunc("POST "+p+"/forks", repo(f.fork))
	mux.HandleFunc("POST "+p+"/merge-upstream", repo(f.mergeUpstream))
	mux.HandleFunc("GET "+p+"/git/ref/{ref...}", repo(f.getRef))
	mux.HandleFunc("POST "+p+"/git/refs", repo(f.createRef))
	mux.HandleFunc("PUT "+p+"/contents/{path...}", repo(f.putContents))
	mux.HandleFunc("POST "+p+"/pulls", repo(f.createPull))
	mux.HandleFunc("GET "+p+"/branches/{branch}", repo(f.getBranch))
	mux.HandleFunc("GET "+p+"/pulls", repo(f.listPulls))
	mux.HandleFunc("GET "+p+"/pulls/{n}", repo(f.getPull))
	mux.HandleFunc("GET "+p+"/pulls/{n}/files", repo(f.pullFiles))
	mux.HandleFunc("GET "+p+"/pulls/{n}/reviews", repo(f.pullReviews))
	mux.HandleFunc("PUT "+p+"/pulls/{n}/merge", repo(f.mergePull))
	mux.HandleFunc("GET "+p+"/compare/{basehead}", repo(f.compareCommits))
	mux.HandleFunc("GET "+p+"/contents/{path...}", repo(f.getContents))
	mux.HandleFunc("GET "+p+"/collaborators/{user}/permission", repo(f.permission))
	mux.HandleFunc("POST "+p+"/check-runs", repo(f.createCheckRun))
	mux.HandleFunc("PATCH "+p+"/check-runs/{id}", repo(f.updateCheckRun))
	mux.HandleFunc("GET "+p+"/commits/{ref}/check-runs", repo(f.listCheckRuns))
	mux.HandleFunc("GET "+p+"/commits/{ref}/pulls", repo(f.commitPulls))
	mux.HandleFunc("GET "+p+"/commits/{ref}", repo(f.getCommit))
	mux.HandleFunc("GET "+p+"/issues", repo(f.listIssues))
	mux.HandleFunc("POST "+p+"/issues", repo(f.createIssue))
	mux.HandleFunc("PATCH "+p+"/issues/{n}", repo(f.editIssue))
	mux.HandleFunc("GET "+p+"/issues/{n}/comments", repo(f.listComments))
	mux.HandleFunc("POST "+p+"/issues/{n}/comments", repo(f.createComment))
	mux.HandleFunc("PATCH "+p+"/issues/comments/{id}", repo(f.editComment))
	mux.HandleFunc("POST "+p+"/issues/{n}/labels", repo(f.addLabels))
	mux.HandleFunc("DELETE "+p+"/issues/{n}/labels/{name}", repo(f.removeLabel))
	mux.HandleFunc("GET /orgs/{org}/teams/{slug}/memberships/{user}", f.teamMembership)
	mux.HandleFunc("GET /orgs/{org}/teams/{slug}", f.team)
	mux.HandleFunc("GET /users/{user}", f.user)
	f.peopleRoutes(mux)
	return mux
}

func (f *Fake) accessToken(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	known := false
	for _, rp := range f.repos {
		known = known || rp.Installation == id
	}
	if !known {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	f.tokenRequests++
	tok, exp := f.newToken(id)
	writeJSON(w, http.StatusCreated, map[string]any{"token": tok, "expires_at": exp.UTC().Format(time.RFC3339)})
}

func (f *Fake) listInstallations(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := []int64{}
	for _, rp := range f.repos {
		if rp.Installation != 0 && !slices.Contains(ids, rp.Installation) { // 0: not installed
			ids = append(ids, rp.Installation)
		}
	}
	slices.Sort(ids)
	out := []map[string]any{}
	for _, id := range ids {
		out = append(out, map[string]any{"id": id, "app_id": f.AppID})
	}
	writeJSON(w, 200, out)
}

func (f *Fake) installationRepositories(w http.ResponseWriter, r *http.Request) {
	inst, ok := f.installationOf(r)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	repos := []map[string]any{}
	for _, rp := range f.repos {
		if rp.Installation == inst {
			repos = append(repos, f.repoJSON(rp))
		}
	}
	writeJSON(w, 200, map[string]any{"total_count": len(repos), "repositories": repos})
}

func (f *Fake) listDeliveries(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	writeJSON(w, 200, append([]Delivery{}, f.deliveries...))
}

func (f *Fake) redeliver(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.redelivered = append(f.redelivered, id)
	writeJSON(w, http.StatusAccepted, map[string]any{})
}

func (f *Fake) repoJSON(rp *Repo) map[string]any {
	return map[string]any{"id": rp.ID, "name": rp.Name, "full_name": rp.FullName(), "private": false,
		"owner":          map[string]any{"login": rp.Owner, "name": rp.Owner, "id": 1, "type": "Organization"},
		"default_branch": rp.DefaultBranch, "fork": rp.parent != nil, "clone_url": f.URL + "/git/" + rp.Owner + "/" + rp.Name + "/.git",
		"html_url": "https://github.example/" + rp.FullName()}
}

// RepoJSON is the repository as webhook payloads describe it.
func (f *Fake) RepoJSON(rp *Repo) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.repoJSON(rp)
}

func (f *Fake) getBranch(w http.ResponseWriter, r *http.Request, rp *Repo) {
	sha := rp.git.head(r.PathValue("branch"))
	if sha == "" {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Branch not found"})
		return
	}
	writeJSON(w, 200, map[string]any{"name": r.PathValue("branch"), "commit": map[string]any{"sha": sha}})
}

func (f *Fake) pullJSON(rp *Repo, p *Pull) map[string]any {
	labels := []map[string]any{}
	for _, l := range p.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	var mergedAt any
	if p.Merged {
		mergedAt = p.MergedAt.UTC().Format(time.RFC3339Nano)
	}
	return map[string]any{"number": p.Number, "state": p.State, "merged": p.Merged, "merged_at": mergedAt,
		"body": p.body, "author_association": cmp.Or(p.association, "CONTRIBUTOR"),
		"user":  map[string]any{"login": p.Author, "type": "User"},
		"head":  map[string]any{"ref": p.HeadRef, "sha": p.headSHA, "repo": f.repoJSON(cmp.Or(p.headRepo, rp))},
		"title": p.Title, "draft": p.Draft, "html_url": "https://github.example/" + rp.FullName() + "/pull/" + strconv.Itoa(p.Number),
		"base":   map[string]any{"ref": p.BaseRef, "sha": rp.git.head(p.BaseRef), "repo": f.repoJSON(rp)},
		"labels": labels, "merge_commit_sha": p.MergeCommitSHA}
}

// PullJSON is the pull request as webhook payloads describe it.
func (f *Fake) PullJSON(rp *Repo, p *Pull) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pullJSON(rp, p)
}

func (f *Fake) pull(w http.ResponseWriter, r *http.Request, rp *Repo) *Pull {
	n, _ := strconv.Atoi(r.PathValue("n"))
	p := rp.pulls[n]
	if p == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	}
	return p
}

func (f *Fake) listPulls(w http.ResponseWriter, r *http.Request, rp *Repo) {
	state := r.URL.Query().Get("state")
	var nums []int
	for n, p := range rp.pulls {
		if state == "" || state == "all" || p.State == state {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	out := []map[string]any{}
	for _, n := range nums {
		out = append(out, f.pullJSON(rp, rp.pulls[n]))
	}
	writeJSON(w, 200, out)
}

func (f *Fake) getPull(w http.ResponseWriter, r *http.Request, rp *Repo) {
	if p := f.pull(w, r, rp); p != nil {
		writeJSON(w, 200, f.pullJSON(rp, p))
	}
}

func (f *Fake) pullFiles(w http.ResponseWriter, r *http.Request, rp *Repo) {
	p := f.pull(w, r, rp)
	if p == nil {
		return
	}
	mb, err := rp.git.git("merge-base", rp.git.head(p.BaseRef), p.headSHA)
	if err != nil {
		writeJSON(w, 500, map[string]string{"message": err.Error()})
		return
	}
	files, err := rp.git.diff(mb, p.headSHA)
	if err != nil {
		writeJSON(w, 500, map[string]string{"message": err.Error()})
		return
	}
	writeJSON(w, 200, files)
}

func (f *Fake) pullReviews(w http.ResponseWriter, r *http.Request, rp *Repo) {
	p := f.pull(w, r, rp)
	if p == nil {
		return
	}
	out := []map[string]any{}
	for _, rv := range p.Reviews {
		out = append(out, map[string]any{"id": rv.ID, "user": map[string]any{"login": rv.User, "type": "User"}, "state": rv.State,
			"commit_id": rv.CommitID, "submitted_at": rv.SubmittedAt.UTC().Format(time.RFC3339Nano)})
	}
	writeJSON(w, 200, out)
}

func (f *Fake) compareCommits(w http.ResponseWriter, r *http.Request, rp *Repo) {
	base, head, ok := strings.Cut(r.PathValue("basehead"), "...")
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	resolve := func(ref string) string {
		if sha := rp.git.head(ref); sha != "" {
			return sha
		}
		return ref
	}
	mb, status, files, err := rp.git.compare(resolve(base), resolve(head))
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "No common ancestor or unknown commit"})
		return
	}
	writeJSON(w, 200, map[string]any{"status": status, "base_commit": map[string]any{"sha": resolve(base)}, "merge_base_commit": map[string]any{"sha": mb}, "files": files})
}

func (f *Fake) getContents(w http.ResponseWriter, r *http.Request, rp *Repo) {
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = rp.DefaultBranch
	}
	out, err := rp.git.git("show", ref+":"+r.PathValue("path"))
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	blob, _ := rp.git.git("rev-parse", ref+":"+r.PathValue("path"))
	writeJSON(w, 200, map[string]any{"type": "file", "encoding": "base64", "path": r.PathValue("path"), "sha": blob,
		"content": base64.StdEncoding.EncodeToString([]byte(out + "\n"))})
}

func (f *Fake) permission(w http.ResponseWriter, r *http.Request, rp *Repo) {
	role, ok := f.roles[r.PathValue("user")]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	legacy := map[string]string{"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}[role]
	writeJSON(w, 200, map[string]any{"permission": legacy, "user": map[string]any{"login": r.PathValue("user"), "role_name": role}})
}

func (f *Fake) teamMembership(w http.ResponseWriter, r *http.Request) {
	if _, ok := f.installationOf(r); !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	f.mu.Lock()
	state, ok := f.teams[r.PathValue("org")+"/"+r.PathValue("slug")][r.PathValue("user")]
	f.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	writeJSON(w, 200, map[string]any{"state": state, "role": "member"})
}

func (f *Fake) team(w http.ResponseWriter, r *http.Request) {
	if _, ok := f.installationOf(r); !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	f.mu.Lock()
	_, ok := f.teams[r.PathValue("org")+"/"+r.PathValue("slug")]
	f.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	writeJSON(w, 200, map[string]any{"slug": r.PathValue("slug"), "name": r.PathValue("slug")})
}

func (f *Fake) user(w http.ResponseWriter, r *http.Request) {
	if _, ok := f.installationOf(r); !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	f.mu.Lock()
	ok := f.users[strings.ToLower(r.PathValue("user"))]
	f.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	writeJSON(w, 200, map[string]any{"login": r.PathValue("user"), "type": "User"})
}

type checkRunRequest struct {
	Name       *string `json:"name"`
	HeadSHA    string  `json:"head_sha"`
	Status     *string `json:"status"`
	Conclusion *string `json:"conclusion"`
	ExternalID *string `json:"external_id"`
	Output     *struct {
		Title       *string          `json:"title"`
		Summary     *string          `json:"summary"`
		Annotations []map[string]any `json:"annotations"`
	} `json:"output"`
}

// validate refuses what GitHub refuses: no name, an output without title
// or summary, more than 50 annotations, a completed run with no
// conclusion, columns on a multi-line annotation.
func (c *checkRunRequest) validate(create bool) string {
	switch {
	case c.Name == nil || *c.Name == "":
		return "name wasn't supplied"
	case create && len(c.HeadSHA) != 40:
		return "head_sha wasn't supplied"
	case c.Output != nil && (c.Output.Title == nil || c.Output.Summary == nil):
		return "output requires title and summary"
	case c.Output != nil && len(c.Output.Annotations) > 50:
		return "at most 50 annotations per request"
	case c.Status != nil && *c.Status == "completed" && c.Conclusion == nil:
		return "conclusion is required when status is completed"
	}
	if c.Output != nil {
		for _, a := range c.Output.Annotations {
			if a["path"] == nil || a["start_line"] == nil || a["end_line"] == nil || a["annotation_level"] == nil || a["message"] == nil {
				return "annotation is missing a required field"
			}
			if a["start_column"] != nil && a["start_line"] != a["end_line"] {
				return "start_column is only allowed when start_line equals end_line"
			}
		}
	}
	return ""
}

func (f *Fake) createCheckRun(w http.ResponseWriter, r *http.Request, rp *Repo) {
	var req checkRunRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	if msg := req.validate(true); msg != "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": msg})
		return
	}
	f.nextID++
	c := &CheckRun{ID: f.nextID, Repo: rp.FullName(), HeadSHA: req.HeadSHA, Name: *req.Name, Status: "queued"}
	c.apply(&req)
	f.checkRuns = append(f.checkRuns, c)
	writeJSON(w, http.StatusCreated, f.checkRunJSON(c))
}

func (c *CheckRun) apply(req *checkRunRequest) {
	if req.Status != nil {
		c.Status = *req.Status
	}
	if req.Conclusion != nil {
		c.Conclusion, c.Status = *req.Conclusion, "completed"
	}
	if req.ExternalID != nil {
		c.ExternalID = *req.ExternalID
	}
	if req.Output != nil {
		c.Title, c.Summary = *req.Output.Title, *req.Output.Summary
		c.Annotations = append(c.Annotations, req.Output.Annotations...)
	}
}

func (f *Fake) updateCheckRun(w http.ResponseWriter, r *http.Request, rp *Repo) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var req checkRunRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	if msg := req.validate(false); msg != "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": msg})
		return
	}
	for _, c := range f.checkRuns {
		if c.ID == id && c.Repo == rp.FullName() {
			c.apply(&req)
			c.Updates++
			writeJSON(w, 200, f.checkRunJSON(c))
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

func (f *Fake) checkRunJSON(c *CheckRun) map[string]any {
	out := map[string]any{"id": c.ID, "name": c.Name, "head_sha": c.HeadSHA, "status": c.Status, "external_id": c.ExternalID,
		"app":    map[string]any{"id": f.AppID, "slug": f.AppSlug},
		"output": map[string]any{"title": c.Title, "summary": c.Summary, "annotations_count": len(c.Annotations)}}
	if c.Conclusion != "" {
		out["conclusion"] = c.Conclusion
	}
	return out
}

func (f *Fake) listCheckRuns(w http.ResponseWriter, r *http.Request, rp *Repo) {
	ref := r.PathValue("ref")
	if sha := rp.git.head(ref); sha != "" {
		ref = sha
	}
	q := r.URL.Query()
	runs := []map[string]any{}
	latest := map[string]int{} // with filter=latest (the default), the newest run per name
	for _, c := range f.checkRuns {
		if c.Repo != rp.FullName() || c.HeadSHA != ref || (q.Get("check_name") != "" && c.Name != q.Get("check_name")) ||
			(q.Get("app_id") != "" && q.Get("app_id") != strconv.FormatInt(f.AppID, 10)) {
			continue
		}
		if i, ok := latest[c.Name]; ok && q.Get("filter") != "all" {
			runs[i] = f.checkRunJSON(c)
			continue
		}
		latest[c.Name] = len(runs)
		runs = append(runs, f.checkRunJSON(c))
	}
	writeJSON(w, 200, map[string]any{"total_count": len(runs), "check_runs": runs})
}

func (f *Fake) listComments(w http.ResponseWriter, r *http.Request, rp *Repo) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	out := []map[string]any{}
	for _, c := range f.comments {
		if c.Repo == rp.FullName() && c.Issue == n {
			out = append(out, f.commentJSON(c))
		}
	}
	writeJSON(w, 200, out)
}

func (f *Fake) commentJSON(c *Comment) map[string]any {
	kind := "User"
	if strings.HasSuffix(c.User, "[bot]") {
		kind = "Bot"
	}
	return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.User, "type": kind}}
}

func (f *Fake) createComment(w http.ResponseWriter, r *http.Request, rp *Repo) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	var body struct{ Body string }
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.Body == "" || len([]rune(body.Body)) > 65536 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Body is invalid or too long (maximum is 65536 characters)"})
		return
	}
	f.nextID++
	c := &Comment{ID: f.nextID, Repo: rp.FullName(), Issue: n, Body: body.Body, User: f.AppSlug + "[bot]"}
	f.comments = append(f.comments, c)
	writeJSON(w, http.StatusCreated, f.commentJSON(c))
}

func (f *Fake) editComment(w http.ResponseWriter, r *http.Request, rp *Repo) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var body struct{ Body string }
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.Body == "" || len([]rune(body.Body)) > 65536 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Body is invalid or too long (maximum is 65536 characters)"})
		return
	}
	for _, c := range f.comments {
		if c.ID == id && c.Repo == rp.FullName() {
			c.Body = body.Body
			c.Edits++
			writeJSON(w, 200, f.commentJSON(c))
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

func (f *Fake) addLabels(w http.ResponseWriter, r *http.Request, rp *Repo) {
	p := f.pull(w, r, rp)
	if p == nil {
		return
	}
	var labels []string
	if err := json.NewDecoder(r.Body).Decode(&labels); err != nil {
		var wrapped struct{ Labels []string }
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON", "wrapped": wrapped})
		return
	}
	for _, l := range labels {
		if !slices.Contains(p.Labels, l) {
			p.Labels = append(p.Labels, l)
		}
	}
	out := []map[string]any{}
	for _, l := range p.Labels {
		out = append(out, map[string]any{"name": l})
	}
	writeJSON(w, 200, out)
}

func (f *Fake) removeLabel(w http.ResponseWriter, r *http.Request, rp *Repo) {
	p := f.pull(w, r, rp)
	if p == nil {
		return
	}
	i := slices.Index(p.Labels, r.PathValue("name"))
	if i < 0 {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Label does not exist"})
		return
	}
	p.Labels = slices.Delete(p.Labels, i, i+1)
	writeJSON(w, 200, []map[string]any{})
}

// commitPulls lists the pull requests a commit belongs to: merged ones by
// their merge commit, open ones by their head.
func (f *Fake) commitPulls(w http.ResponseWriter, r *http.Request, rp *Repo) {
	sha := r.PathValue("ref")
	out := []map[string]any{}
	for _, p := range rp.pulls {
		if p.MergeCommitSHA == sha || p.State == "open" && p.headSHA == sha {
			out = append(out, f.pullJSON(rp, p))
		}
	}
	writeJSON(w, 200, out)
}

// getCommit is a commit with its parents.
func (f *Fake) getCommit(w http.ResponseWriter, r *http.Request, rp *Repo) {
	ref := r.PathValue("ref")
	if sha := rp.git.head(ref); sha != "" {
		ref = sha
	}
	out, err := rp.git.git("rev-list", "--parents", "-n", "1", ref)
	if err != nil || out == "" {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "No commit found for SHA: " + ref})
		return
	}
	shas := strings.Fields(out)
	parents := []map[string]any{}
	for _, p := range shas[1:] {
		parents = append(parents, map[string]any{"sha": p})
	}
	msg, _ := rp.git.git("log", "-1", "--format=%B", shas[0])
	writeJSON(w, 200, map[string]any{"sha": shas[0], "parents": parents, "commit": map[string]any{"message": msg}})
}

func (f *Fake) issueJSON(i *Issue) map[string]any {
	labels := []map[string]any{}
	for _, l := range i.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	return map[string]any{"number": i.Number, "title": i.Title, "body": i.Body, "state": i.State, "labels": labels,
		"user": map[string]any{"login": f.AppSlug + "[bot]", "type": "Bot"}}
}

func (f *Fake) listIssues(w http.ResponseWriter, r *http.Request, rp *Repo) {
	q := r.URL.Query()
	out := []map[string]any{}
	for _, i := range f.issues {
		if i.Repo != rp.FullName() || (q.Get("state") != "all" && i.State != cmp.Or(q.Get("state"), "open")) {
			continue
		}
		if l := q.Get("labels"); l != "" && !slices.Contains(i.Labels, l) {
			continue
		}
		out = append(out, f.issueJSON(i))
	}
	writeJSON(w, 200, out)
}

type issueRequest struct {
	Title  *string   `json:"title"`
	Body   *string   `json:"body"`
	State  *string   `json:"state"`
	Labels *[]string `json:"labels"`
}

func (f *Fake) createIssue(w http.ResponseWriter, r *http.Request, rp *Repo) {
	var req issueRequest
	if json.NewDecoder(r.Body).Decode(&req) != nil || req.Title == nil || *req.Title == "" || req.Body != nil && len([]rune(*req.Body)) > 65536 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
		return
	}
	i := &Issue{Number: rp.nextPull, Repo: rp.FullName(), Title: *req.Title, State: "open"}
	rp.nextPull++
	if req.Body != nil {
		i.Body = *req.Body
	}
	if req.Labels != nil {
		i.Labels = *req.Labels
	}
	f.issues = append(f.issues, i)
	writeJSON(w, http.StatusCreated, f.issueJSON(i))
}

func (f *Fake) editIssue(w http.ResponseWriter, r *http.Request, rp *Repo) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	var req issueRequest
	if json.NewDecoder(r.Body).Decode(&req) != nil || req.Body != nil && len([]rune(*req.Body)) > 65536 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
		return
	}
	for _, i := range f.issues {
		if i.Repo == rp.FullName() && i.Number == n {
			if req.Title != nil {
				i.Title = *req.Title
			}
			if req.Body != nil {
				i.Body = *req.Body
			}
			if req.State != nil {
				i.State = *req.State
			}
			if req.Labels != nil {
				i.Labels = *req.Labels
			}
			i.Edits++
			writeJSON(w, 200, f.issueJSON(i))
			return
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

// mergePull merges a pull request as GitHub's API does: 409 when the head
// is not the sha given, 405 when it is not open.
func (f *Fake) mergePull(w http.ResponseWriter, r *http.Request, rp *Repo) {
	p := f.pull(w, r, rp)
	if p == nil {
		return
	}
	var req struct {
		SHA string `json:"sha"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	switch {
	case p.State != "open":
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"message": "Pull Request is not mergeable"})
		return
	case req.SHA != "" && req.SHA != p.headSHA:
		writeJSON(w, http.StatusConflict, map[string]string{"message": "Head branch was modified. Review and try the merge again."})
		return
	}
	rp.git.must(f.t, "checkout", "-q", p.BaseRef)
	rp.git.must(f.t, "merge", "-q", "--no-ff", "-m", fmt.Sprintf("Merge pull request #%d", p.Number), p.headSHA)
	p.State, p.Merged, p.MergeCommitSHA, p.MergedAt = "closed", true, rp.git.head(p.BaseRef), time.Now()
	writeJSON(w, 200, map[string]any{"sha": p.MergeCommitSHA, "merged": true, "message": "Pull Request successfully merged"})
}
