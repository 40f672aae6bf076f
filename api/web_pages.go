package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/credential"
	"github.com/sipregistry/sip/registry/evaluation"
)

// evalRow is an evaluation in a listing.
type evalRow struct {
	E       *registry.Entry
	Prereqs []*registry.Entry
	Passes  int
	// Unavailable is why an active evaluation takes no registrations on
	// this server (its sealed answers do not open here, its handler does
	// not run here), as register would refuse.
	Unavailable *evaluation.Refusal
}

type moduleGroup struct {
	Name string
	Rows []evalRow
}

// resultRow is a result in a listing, with its agent and evaluation.
type resultRow struct {
	R     *evaluation.Result
	Agent string
	E     *registry.Entry
}

func (s *Server) rows(snap *snapshot, counts map[string]int, keep func(*registry.Entry) bool) []evalRow {
	var out []evalRow
	for _, e := range snap.entries {
		if e.Removed || !keep(e) {
			continue
		}
		row := evalRow{E: e, Passes: counts[e.ID]}
		if e.Type.IsEvaluation() && e.Status == registry.StatusActive && s.serves.Results {
			row.Unavailable = s.runtime.Unavailable(e)
		}
		for _, p := range e.Prerequisites {
			if pe := snap.byID[p]; pe != nil {
				row.Prereqs = append(row.Prereqs, pe)
			}
		}
		out = append(out, row)
	}
	return out
}

func (s *Server) resultRows(c echo.Context, snap *snapshot, rs []*evaluation.Result) ([]resultRow, error) {
	names, err := s.agentNames(c.Request().Context(), rs)
	if err != nil {
		return nil, err
	}
	out := make([]resultRow, 0, len(rs))
	for _, r := range rs {
		out = append(out, resultRow{R: r, Agent: names[r.AgentID], E: snap.byID[r.EvaluationID]})
	}
	return out, nil
}

// catalogWithCounts is the registry as the listings show it: the current
// snapshot and how many agents passed each evaluation.
func (s *Server) catalogWithCounts(ctx context.Context) (*snapshot, map[string]int, error) {
	snap, err := s.catalog.current(ctx)
	if err != nil {
		return nil, nil, err
	}
	counts, err := s.runtime.PassCounts(ctx)
	return snap, counts, err
}

type homePage struct {
	pageBase
	Modules []moduleGroup
	Recent  []resultRow
	Active  int
	// Source is what the registry follows (the bundled SIPs, a folder, or
	// a repository and commit), as of its last sync.
	Source   string
	SyncedAt time.Time
}

// home serves /: the active evaluations by module, and recent passes.
func (s *Server) home(c echo.Context) error {
	ctx := c.Request().Context()
	snap, counts, err := s.catalogWithCounts(ctx)
	if err != nil {
		return err
	}
	recent, _, err := s.runtime.Results(ctx, evaluation.ResultFilter{PassedOnly: true, Limit: 10})
	if err != nil {
		return err
	}
	fp := countsFingerprint(counts)
	for _, r := range recent {
		fp += r.ID + ","
	}
	return s.cachedPage(c, snap, "/", fp, func() (string, any, error) {
		page := homePage{pageBase: pageBase{Title: "SIP registry", Nav: "home", Version: s.version},
			Source: snap.state.Source, SyncedAt: snap.state.SyncedAt}
		byModule := map[string][]evalRow{}
		for _, r := range s.rows(snap, counts, func(e *registry.Entry) bool { return e.Status == registry.StatusActive }) {
			byModule[r.E.Module] = append(byModule[r.E.Module], r)
			page.Active++
		}
		for name, rows := range byModule {
			page.Modules = append(page.Modules, moduleGroup{Name: name, Rows: rows})
		}
		sort.Slice(page.Modules, func(i, j int) bool { return page.Modules[i].Name < page.Modules[j].Name })
		var err error
		page.Recent, err = s.resultRows(c, snap, recent)
		return "home", page, err
	})
}

type evaluationsPage struct {
	pageBase
	Modules  []string
	Module   string
	Types    []registry.Type // the evaluation types, for the filter
	Type     string
	Statuses []registry.Status
	Status   string
	Rows     []evalRow // evaluations
	Process  []evalRow // process SIPs: how the registry works, not taken
}

// Query is the page's filters as a query string, with one changed.
func (p evaluationsPage) Query(key, value string) string {
	q := url.Values{}
	for k, v := range map[string]string{"module": p.Module, "type": p.Type, "status": p.Status} {
		if k == key {
			v = value
		}
		if v != "" {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return "/evaluations"
	}
	return "/evaluations?" + q.Encode()
}

// evaluationsTable serves /evaluations: the enroll table, filtered by
// ?module=, ?type= and ?status=; process SIPs are listed apart.
func (s *Server) evaluationsTable(c echo.Context) error {
	ctx := c.Request().Context()
	snap, counts, err := s.catalogWithCounts(ctx)
	if err != nil {
		return err
	}
	page := evaluationsPage{pageBase: pageBase{Title: "Evaluations", Nav: "evaluations", Version: s.version},
		Module: c.QueryParam("module"), Type: c.QueryParam("type"), Status: c.QueryParam("status"), Statuses: registry.Statuses}
	for _, t := range registry.Types {
		if t.IsEvaluation() {
			page.Types = append(page.Types, t)
		}
	}
	for _, e := range snap.entries {
		if !e.Removed && !slices.Contains(page.Modules, e.Module) {
			page.Modules = append(page.Modules, e.Module)
		}
	}
	slices.Sort(page.Modules)
	switch {
	case page.Module != "" && !slices.Contains(page.Modules, page.Module):
		return notFound("no module "+quote(page.Module), "Pick a module from the list on /evaluations.")
	case page.Type != "" && !slices.Contains(page.Types, registry.Type(page.Type)):
		return notFound("no evaluation type "+quote(page.Type), "Pick a type from the list on /evaluations.")
	case page.Status != "" && !slices.Contains(page.Statuses, registry.Status(page.Status)):
		return notFound("no status "+quote(page.Status), "Pick draft, active or deprecated.")
	}
	key := page.Query("", "")
	return s.cachedPage(c, snap, key, countsFingerprint(counts), func() (string, any, error) {
		keep := func(e *registry.Entry) bool {
			return (page.Module == "" || e.Module == page.Module) && (page.Status == "" || string(e.Status) == page.Status)
		}
		page.Rows = s.rows(snap, counts, func(e *registry.Entry) bool {
			return e.Type.IsEvaluation() && keep(e) && (page.Type == "" || string(e.Type) == page.Type)
		})
		if page.Type == "" {
			page.Process = s.rows(snap, counts, func(e *registry.Entry) bool { return !e.Type.IsEvaluation() && keep(e) })
		}
		if page.Module != "" {
			page.Title = "Evaluations in " + page.Module
		}
		return "evaluations", page, nil
	})
}

type versionRow struct {
	V         registry.Version
	CommitURL string
}

type evaluationPage struct {
	pageBase
	E          *registry.Entry
	Body       any // template.HTML, sanitised
	Chain      []*registry.Entry
	RequiredBy []*registry.Entry
	Versions   []versionRow
	Results    []resultRow
	Passes     int
	StatsLink  bool
	// ProposeURL opens the editor on this SIP; SourceURL is its file in
	// the repository. Neither is set on the editor's preview.
	ProposeURL, SourceURL string
}

// evaluationDetail serves /evaluations/{sip}: the whole SIP, rendered.
func (s *Server) evaluationDetail(c echo.Context) error {
	ctx := c.Request().Context()
	snap, counts, err := s.catalogWithCounts(ctx)
	if err != nil {
		return err
	}
	e := snap.lookup(c.Param("ref"))
	if e == nil {
		return notFound("no evaluation "+quote(c.Param("ref")), "See /evaluations for the list.")
	}
	page := evaluationPage{pageBase: pageBase{Title: fmt.Sprintf("SIP-%d: %s", e.Number, e.Name), Nav: "evaluations", Version: s.version},
		E: e, Body: s.markdown.render(e.ContentSHA256, e.Body), Chain: chain(snap, e), StatsLink: s.stats != nil,
		SourceURL: s.sourceURL(snap, e)}
	if !e.Removed {
		page.ProposeURL = fmt.Sprintf("/contribute/edit/SIP-%d", e.Number)
	}
	for _, other := range snap.entries {
		if !other.Removed && slices.Contains(other.Prerequisites, e.ID) {
			page.RequiredBy = append(page.RequiredBy, other)
		}
	}
	versions, err := s.catalog.registry.Versions(ctx, e.ID)
	if err != nil {
		return err
	}
	for i := len(versions) - 1; i >= 0; i-- { // newest first
		v := versions[i]
		row := versionRow{V: v}
		if v.CommitSHA != "" && s.commitURL != "" {
			row.CommitURL = strings.ReplaceAll(s.commitURL, "{sha}", v.CommitSHA)
		}
		page.Versions = append(page.Versions, row)
	}
	page.Passes = counts[e.ID]
	results, _, err := s.runtime.Results(ctx, evaluation.ResultFilter{EvaluationID: e.ID, Limit: 20})
	if err != nil {
		return err
	}
	if page.Results, err = s.resultRows(c, snap, results); err != nil {
		return err
	}
	return s.renderPage(c, http.StatusOK, "evaluation", page)
}

// chain is every prerequisite of e, transitively, each after its own
// prerequisites (the order to take them in).
func chain(snap *snapshot, e *registry.Entry) []*registry.Entry {
	var out []*registry.Entry
	seen := map[string]bool{e.ID: true}
	var visit func(*registry.Entry)
	visit = func(x *registry.Entry) {
		for _, id := range x.Prerequisites {
			p := snap.byID[id]
			if p == nil || seen[id] {
				continue
			}
			seen[id] = true
			visit(p)
			out = append(out, p)
		}
	}
	visit(e)
	return out
}

type agentPage struct {
	pageBase
	A       *registry.Agent
	Points  float64
	Badges  []badge
	Results []resultRow
}

// agentProfile serves /agents/{name}: the profile, badges and points; the
// results only when the agent keeps them public.
func (s *Server) agentProfile(c echo.Context) error {
	ctx := c.Request().Context()
	name := c.Param("name")
	if registry.CheckAgentName(name) != nil {
		return notFound("no agent "+quote(name), "Check the name.")
	}
	a, err := s.runtime.AgentNamed(ctx, name)
	if errors.Is(err, registry.ErrNotFound) {
		return notFound("no agent "+quote(name), "Check the name.")
	}
	if err != nil {
		return err
	}
	page := agentPage{pageBase: pageBase{Title: a.Name, Version: s.version}, A: a}
	if registry.CanSee("", a, registry.SeePoints) {
		if page.Points, err = s.runtime.Points(ctx, a.ID); err != nil {
			return err
		}
	}
	if registry.CanSee("", a, registry.SeeResults) {
		if page.Badges, err = s.badges(ctx, a); err != nil {
			return err
		}
		snap, err := s.catalog.current(ctx)
		if err != nil {
			return err
		}
		results, _, err := s.runtime.Results(ctx, evaluation.ResultFilter{AgentID: a.ID, Limit: 50})
		if err != nil {
			return err
		}
		if page.Results, err = s.resultRows(c, snap, results); err != nil {
			return err
		}
	}
	return s.renderPage(c, http.StatusOK, "agent", page)
}

type resultPage struct {
	pageBase
	R     *evaluation.Result
	Agent *registry.Agent
	E     *registry.Entry
	// AnswersPrivate says the attempt has answers the page does not show.
	AnswersPrivate bool
	Conversation   []conversationLine // a multi-agent session's messages
	// FeedbackPrivate says the attempt was graded by a judge or a
	// proctor, whose feedback only the agent sees.
	FeedbackPrivate bool
	Credential      *credentialPanel // a pass's credential, verified as the page is made
}

// credentialPanel is the result page's view of a pass's credential.
type credentialPanel struct {
	Issuer   string
	Download string
	Checks   []credential.Check
}

// conversationLine is one message of a session, with its sender's name.
type conversationLine struct {
	Sequence int64
	Name     string
	Role     string
	Content  string
	At       time.Time
}

// pageMessages is how many messages of a session a page shows.
const pageMessages = 500

// conversation is a session's transcript for a page.
func (s *Server) conversation(c echo.Context, sess *evaluation.Session) ([]conversationLine, error) {
	ctx := c.Request().Context()
	// The page shows the first pageMessages messages; the API pages the
	// rest, so a long session costs a page view one bounded read. Pages
	// are public: anyone's view of the transcript.
	tr, err := s.runtime.Transcript(ctx, "", sess.ID, 0, pageMessages)
	if err != nil {
		return nil, err
	}
	names := map[string]string{"": evaluation.PrivateName}
	for _, p := range tr.Participants {
		names[p.AgentID] = p.Name
	}
	out := make([]conversationLine, 0, len(tr.Messages))
	for _, m := range tr.Messages {
		out = append(out, conversationLine{Sequence: m.Sequence, Name: names[m.SenderID], Role: m.Role, Content: m.Content, At: m.CreatedAt})
	}
	return out, nil
}

// resultDetail serves /results/{id}: the result, its execution record and
// its transcript; results of agents that keep them private are not found.
func (s *Server) resultDetail(c echo.Context) error {
	ctx := c.Request().Context()
	r, a, err := s.runtime.VisibleResult(ctx, "", c.Param("id")) // pages are public
	if err != nil {
		return err
	}
	snap, err := s.catalog.current(ctx)
	if err != nil {
		return err
	}
	page := resultPage{pageBase: pageBase{Title: "Result " + r.ID, Version: s.version}, R: r, Agent: a, E: snap.byID[r.EvaluationID]}
	if page.E != nil {
		page.Title = fmt.Sprintf("%s · SIP-%d %s", a.Name, page.E.Number, page.E.Name)
	}
	if s.serves.Sessions {
		sess, err := s.runtime.SessionOf(ctx, r.RegistrationID)
		if err != nil && !errors.Is(err, registry.ErrNotFound) {
			return err
		}
		if sess != nil {
			if page.Conversation, err = s.conversation(c, sess); err != nil {
				return err
			}
		}
	}
	// A judged attempt's answers and responses are not on the public page:
	// a passing agent's answers would be an answer key for anyone. The
	// agent reads its own through the API.
	if s.serves.Jobs && page.Conversation == nil {
		job, err := s.runtime.JobOf(ctx, r.RegistrationID)
		if err != nil && !errors.Is(err, registry.ErrNotFound) {
			return err
		}
		page.AnswersPrivate = job != nil && len(job.Submission) > 0
	}
	page.FeedbackPrivate = page.AnswersPrivate || page.Conversation != nil
	if page.Credential, err = s.credentialPanel(c, r, a); err != nil {
		return err
	}
	return s.renderPage(c, http.StatusOK, "result", page)
}

// credentialPanel issues a pass's credential and verifies it as any
// verifier would (status list included), for the result page.
func (s *Server) credentialPanel(c echo.Context, r *evaluation.Result, a *registry.Agent) (*credentialPanel, error) {
	if s.issuer == nil || r.EndedAs() != evaluation.OutcomePassed {
		return nil, nil
	}
	signed, err := s.credentialOf(c.Request().Context(), r, a)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(signed)
	if err != nil {
		return nil, err
	}
	rep := credential.Verify(raw, s.issuer, localStatus{s, c.Request().Context()}, s.now())
	return &credentialPanel{Issuer: s.issuer.DID, Download: "/api/v1/results/" + r.ID + "/credential?download=1", Checks: rep.Checks}, nil
}

// agentsPage is the directory: agents by points.
type agentsPage struct {
	pageBase
	Rows            []standingRow
	Total, From, To int
	Prev, Next      int // page numbers, 0 for none
}

type standingRow struct {
	Rank int
	S    evaluation.Standing
}

// agentsPerPage is how many agents a page of the directory lists.
const agentsPerPage = 50

// agentsDirectory serves /agents?page=N: public agents by points.
func (s *Server) agentsDirectory(c echo.Context) error {
	n := 1
	if p := c.QueryParam("page"); p != "" {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 || v > 1_000_000 {
			return notFound("no such page of agents", "Pages are numbered from 1.")
		}
		n = v
	}
	offset := (n - 1) * agentsPerPage
	rows, total, err := s.runtime.Standings(c.Request().Context(), offset, agentsPerPage)
	if err != nil {
		return err
	}
	if len(rows) == 0 && n > 1 {
		return notFound("no such page of agents", "Go back to /agents.")
	}
	page := agentsPage{pageBase: pageBase{Title: "Agents", Nav: "agents", Version: s.version}, Total: total,
		From: offset + 1, To: offset + len(rows)}
	for i, st := range rows {
		page.Rows = append(page.Rows, standingRow{Rank: offset + i + 1, S: st})
	}
	if n > 1 {
		page.Prev = n - 1
	}
	if offset+len(rows) < total {
		page.Next = n + 1
	}
	return s.renderPage(c, http.StatusOK, "agents", page)
}
