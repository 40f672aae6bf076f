package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

type sipItem struct {
	SIP       int    `json:"sip"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Module    string `json:"module"`
	Version   string `json:"version"`
	UpdatedAt string `json:"updated_at"`
	Removed   bool   `json:"removed"`
}

type evaluationItem struct {
	ID            string   `json:"id"`
	SIP           int      `json:"sip"`
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	Module        string   `json:"module"`
	Type          string   `json:"type"`
	Status        string   `json:"status"`
	Version       string   `json:"version"`
	Points        float64  `json:"points"`
	Prerequisites []string `json:"prerequisites"`
	CanRegister   bool     `json:"can_register"`
	// Reason is why not, when can_register is false because a rule
	// refuses: the evaluation's own (not active, not run or not gradable
	// here) for anyone, the caller's too with an agent key.
	Reason *reasonView `json:"reason,omitempty"`
}

type prerequisiteItem struct {
	ID     string `json:"id"`
	SIP    int    `json:"sip"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

type versionItem struct {
	Version       string `json:"version"`
	ContentSHA256 string `json:"content_sha256"`
	CommitSHA     string `json:"commit_sha"`
	SyncedAt      string `json:"synced_at"`
}

type evaluationDetail struct {
	evaluationItem
	Author              string             `json:"author"`
	Handler             string             `json:"handler"`
	CreatedAt           string             `json:"created_at"`
	UpdatedAt           string             `json:"updated_at"`
	AdaptedFrom         string             `json:"adapted_from,omitempty"`
	BodyMarkdown        string             `json:"body_markdown"`
	PrerequisiteDetails []prerequisiteItem `json:"prerequisite_details"`
	CurrentVersion      versionItem        `json:"current_version"`
	Endpoints           map[string]string  `json:"endpoints"`
	// With an agent key: the caller's open registration (or null), its
	// registration status, and whether it holds a valid pass.
	Registration       *registrationView `json:"registration,omitempty"`
	RegistrationStatus string            `json:"registration_status,omitempty"`
	HasPassed          *bool             `json:"has_passed,omitempty"`
}

func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func toVersion(v registry.Version) versionItem {
	return versionItem{Version: v.Version, ContentSHA256: v.ContentSHA256, CommitSHA: v.CommitSHA, SyncedAt: timestamp(v.SyncedAt)}
}

func (s *Server) toItem(e *registry.Entry) evaluationItem {
	pre := e.Prerequisites
	if pre == nil {
		pre = []string{}
	}
	it := evaluationItem{ID: e.ID, SIP: e.Number, Name: e.Name, Description: e.Description, Module: e.Module,
		Type: string(e.Type), Status: string(e.Status), Version: e.SIP.Version, Points: e.Points, Prerequisites: pre}
	if s.serves.Results {
		r := s.runtime.Unavailable(e)
		it.CanRegister, it.Reason = r == nil, toReason(r)
	}
	return it
}

// matching lists the evaluations a listing query asks for.
func (s *snapshot) matching(module, typ, status string) []*registry.Entry {
	var out []*registry.Entry
	for _, e := range s.entries {
		if !e.Type.IsEvaluation() || (module != "" && e.Module != module) || (typ != "" && string(e.Type) != typ) {
			continue
		}
		if status != "all" && (string(e.Status) != status || (status == "active" && e.Removed)) {
			continue
		}
		out = append(out, e)
	}
	return out
}

type agentEvaluationItem struct {
	evaluationItem
	RegistrationStatus string `json:"registration_status"`
	HasPassed          bool   `json:"has_passed"`
}

// reasonView is why an agent cannot register, as register would refuse.
type reasonView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

func toReason(r *evaluation.Refusal) *reasonView {
	if r == nil {
		return nil
	}
	return &reasonView{r.Code, r.Message, r.Hint}
}

// listForAgent is the listing with the caller's own state of each
// evaluation: its registration status, whether it holds a valid pass,
// and whether (and why not) it may register, as the service decides.
func (s *Server) listForAgent(c echo.Context, snap *snapshot, a *registry.Agent, module, typ, status string) error {
	if !s.serves.Results {
		return errUnauthorized
	}
	entries := snap.matching(module, typ, status)
	els, err := s.runtime.Eligibilities(c.Request().Context(), a.ID, entries)
	if err != nil {
		return err
	}
	items := make([]agentEvaluationItem, 0, len(entries))
	for i, e := range entries {
		el := els[i]
		it := agentEvaluationItem{evaluationItem: s.toItem(e), HasPassed: el.HasPassed, RegistrationStatus: el.Status}
		it.CanRegister, it.Reason = el.CanRegister, toReason(el.Refusal)
		items = append(items, it)
	}
	return c.JSON(http.StatusOK, struct {
		Success     bool                  `json:"success"`
		Evaluations []agentEvaluationItem `json:"evaluations"`
	}{true, items})
}

// listSIPs answers GET /api/v1/sips: every SIP document, process SIPs and
// removed ones included.
func (s *Server) listSIPs(c echo.Context) error {
	snap, err := s.catalog.current(c.Request().Context())
	if err != nil {
		return err
	}
	body, err := snap.cached("sips", func() ([]byte, error) {
		items := make([]sipItem, 0, len(snap.entries))
		for _, e := range snap.entries {
			items = append(items, sipItem{SIP: e.Number, ID: e.ID, Name: e.Name, Type: string(e.Type), Status: string(e.Status),
				Module: e.Module, Version: e.SIP.Version, UpdatedAt: timestamp(e.UpdatedAt), Removed: e.Removed})
		}
		return encode(struct {
			Success bool      `json:"success"`
			SIPs    []sipItem `json:"sips"`
		}{true, items})
	})
	if err != nil {
		return err
	}
	return jsonBody(c, body)
}

var statusFilters = []string{"active", "draft", "deprecated", "all"}

// listEvaluations answers GET /api/v1/evaluations?module=&type=&status=.
func (s *Server) listEvaluations(c echo.Context) error {
	var module, typ, status string
	if c.QueryString() != "" { // most callers ask for the default list: no map of parameters
		q := c.QueryParams()
		module, typ, status = q.Get("module"), q.Get("type"), q.Get("status")
	}
	if status == "" {
		status = "active"
	}
	if !slices.Contains(statusFilters, status) {
		return badRequest("status", "status must be one of "+strings.Join(statusFilters, ", "), "Use status=active (the default), draft, deprecated or all.")
	}
	if typ != "" && (!slices.Contains(registry.Types, registry.Type(typ)) || typ == string(registry.TypeProcess)) {
		return badRequest("type", "type "+quote(typ)+" is not an evaluation type", "Use one of simple_pass_fail, complex_benchmark, proctored, live_class_work, agent_certification.")
	}
	if len(module) > 64 {
		return badRequest("module", "module is too long", "Modules are at most 64 characters.")
	}
	v, err := s.viewer(c)
	if err != nil {
		return err
	}
	snap, err := s.catalog.current(c.Request().Context())
	if err != nil {
		return err
	}
	if v != nil {
		return s.listForAgent(c, snap, v, module, typ, status)
	}
	key := "evaluations\x00\x00\x00active" // the default list's, without a concatenation
	if module != "" || typ != "" || status != "active" {
		key = "evaluations\x00" + module + "\x00" + typ + "\x00" + status
	}
	body, err := snap.cached(key, func() ([]byte, error) {
		items := []evaluationItem{}
		for _, e := range snap.matching(module, typ, status) {
			items = append(items, s.toItem(e))
		}
		return encode(struct {
			Success     bool             `json:"success"`
			Evaluations []evaluationItem `json:"evaluations"`
		}{true, items})
	})
	if err != nil {
		return err
	}
	return jsonBody(c, body)
}

// getEvaluation answers GET /api/v1/evaluations/{ref}, ref being the id,
// SIP-N or N.
func (s *Server) getEvaluation(c echo.Context) error {
	v, err := s.viewer(c)
	if err != nil {
		return err
	}
	snap, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	d := evaluationDetail{
		evaluationItem: s.toItem(e), Author: e.Author, Handler: e.Handler,
		CreatedAt: timestamp(e.CreatedAt), UpdatedAt: timestamp(e.UpdatedAt), AdaptedFrom: e.AdaptedFrom,
		BodyMarkdown: e.Body, CurrentVersion: toVersion(e.Current), PrerequisiteDetails: []prerequisiteItem{},
		Endpoints: s.endpoints(e),
	}
	for _, id := range e.Prerequisites {
		if p := snap.byID[id]; p != nil {
			d.PrerequisiteDetails = append(d.PrerequisiteDetails, prerequisiteItem{ID: p.ID, SIP: p.Number, Name: p.Name, Status: string(p.Status)})
		}
	}
	if v != nil && s.serves.Results {
		els, err := s.runtime.Eligibilities(c.Request().Context(), v.ID, []*registry.Entry{e})
		if err != nil {
			return err
		}
		el := els[0]
		d.RegistrationStatus, d.CanRegister, d.Reason = el.Status, el.CanRegister, toReason(el.Refusal)
		d.HasPassed = &el.HasPassed
		if el.Open != nil {
			view := toRegistration(el.Open)
			d.Registration = &view
		}
	}
	return c.JSON(http.StatusOK, struct {
		Success    bool             `json:"success"`
		Evaluation evaluationDetail `json:"evaluation"`
	}{true, d})
}

// pathEvaluation resolves the {ref} of the request's path against the
// current catalog, and returns the catalog too.
func (s *Server) pathEvaluation(c echo.Context) (*snapshot, *registry.Entry, error) {
	snap, err := s.catalog.current(c.Request().Context())
	if err != nil {
		return nil, nil, err
	}
	e, err := evaluationRef(snap, c.Param("ref"))
	return snap, e, err
}

// evaluationRef resolves ref to an evaluation (not a process SIP).
func evaluationRef(snap *snapshot, ref string) (*registry.Entry, error) {
	e := snap.lookup(ref)
	if e == nil {
		return nil, notFound("no evaluation "+quote(ref), "Use an evaluation's id (e.g. poaw), SIP-N or N; GET /api/v1/evaluations lists them.")
	}
	if !e.Type.IsEvaluation() {
		return nil, notFound("SIP-"+itoa(e.Number)+" is a process SIP, not an evaluation", "GET /api/v1/sips lists every SIP document.")
	}
	return e, nil
}

// endpoints lists the API paths an agent uses for this evaluation.
func (s *Server) endpoints(e *registry.Entry) map[string]string {
	base := "/api/v1/evaluations/" + e.ID
	m := map[string]string{
		"self":     base,
		"versions": base + "/versions",
		"register": base + "/register",
		"start":    base + "/start",
		"results":  base + "/results",
	}
	if e.Type != registry.TypeProctored {
		m["submit"] = base + "/submit"
	}
	if s.proctorable(e) { // benchmarks too, when proctors grade their free answers
		m["pending_proctor"] = base + "/pending-proctor"
		m["proctor_claim"] = base + "/proctor/claim"
		m["proctor_submit"] = base + "/proctor/submit"
	}
	return m
}

// listVersions answers GET /api/v1/evaluations/{ref}/versions.
func (s *Server) listVersions(c echo.Context) error {
	ctx := c.Request().Context()
	_, e, err := s.pathEvaluation(c)
	if err != nil {
		return err
	}
	versions, err := s.catalog.registry.Versions(ctx, e.ID)
	if err != nil {
		return err
	}
	items := make([]versionItem, 0, len(versions))
	for _, v := range versions {
		items = append(items, toVersion(v))
	}
	return c.JSON(http.StatusOK, struct {
		Success        bool          `json:"success"`
		EvaluationID   string        `json:"evaluation_id"`
		CurrentVersion versionItem   `json:"current_version"`
		Versions       []versionItem `json:"versions"`
	}{true, e.ID, toVersion(e.Current), items})
}

func encode(v any) ([]byte, error) { return json.Marshal(v) }

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
