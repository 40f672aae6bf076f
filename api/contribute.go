package api

import (
	"context"
	"net/http"
	"path"
	"sync"

	"github.com/labstack/echo/v4"
	"github.com/sipregistry/sip/registry"
)

// drafts checks proposed SIP files against the registry: the registry's
// SIPs, parsed from their stored files, are kept for one sync generation.
type drafts struct {
	mu         sync.Mutex
	generation int64
	ctx        *registry.DraftContext
	sources    map[string][]byte // stored files by SIP id
}

// context is the registry a draft is checked against, at snap's
// generation.
func (s *Server) draftContext(ctx context.Context, snap *snapshot) (*registry.DraftContext, map[string][]byte, error) {
	d := &s.drafts
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx != nil && d.generation == snap.generation {
		return d.ctx, d.sources, nil
	}
	dc := &registry.DraftContext{Name: "the registry", Dir: registry.DefaultDir, Removed: map[int]string{}}
	if c := snap.state.CommitSHA; c != "" {
		dc.Name = "the registry (" + shortSHA(c) + ")"
	}
	sources := map[string][]byte{}
	for _, e := range snap.entries {
		if e.Removed {
			dc.Removed[e.Number] = e.ID
			continue
		}
		content, err := s.catalog.registry.File(ctx, e.ID)
		if err != nil {
			return nil, nil, err
		}
		sources[e.ID] = content
		dc.Docs = append(dc.Docs, registry.Parse(e.Path, content))
		dc.Dir = path.Dir(e.Path)
	}
	d.generation, d.ctx, d.sources = snap.generation, dc, sources
	return dc, sources, nil
}

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// checkDraft checks one proposed SIP file against the current registry.
func (s *Server) checkDraft(ctx context.Context, content []byte, isNew bool) (registry.DraftCheck, error) {
	snap, err := s.catalog.current(ctx)
	if err != nil {
		return registry.DraftCheck{}, err
	}
	dc, _, err := s.draftContext(ctx, snap)
	if err != nil {
		return registry.DraftCheck{}, err
	}
	return registry.CheckDraft(*dc, registry.Draft{Content: content, New: isNew}), nil
}

type validateRequest struct {
	Content string `json:"content"`
	New     bool   `json:"new"`
}

type problemView struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	EndLine  int    `json:"end_line"`
	Message  string `json:"message"`
	Hint     string `json:"hint"`
}

type prerequisiteView struct {
	ID     string `json:"id"`
	Number int    `json:"sip,omitempty"`
	Name   string `json:"name,omitempty"`
	Status string `json:"status,omitempty"`
	Known  bool   `json:"known"`
}

type draftPreviewView struct {
	Change          string             `json:"change"`
	Number          int                `json:"sip"`
	ID              string             `json:"id"`
	Name            string             `json:"name"`
	Type            string             `json:"type"`
	Status          string             `json:"status"`
	Version         string             `json:"version"`
	PreviousVersion string             `json:"previous_version,omitempty"`
	Handler         string             `json:"handler"`
	NextNumber      int                `json:"next_number"`
	Prerequisites   []prerequisiteView `json:"prerequisites"`
}

type validateResponse struct {
	Success  bool             `json:"success"`
	Valid    bool             `json:"valid"`
	Path     string           `json:"path"`
	Errors   int              `json:"errors"`
	Warnings int              `json:"warnings"`
	Problems []problemView    `json:"problems"`
	Preview  draftPreviewView `json:"preview"`
}

func validateView(ch registry.DraftCheck) validateResponse {
	errs, warns := registry.Count(ch.Problems)
	out := validateResponse{Success: true, Valid: errs == 0, Path: ch.Path, Errors: errs, Warnings: warns, Problems: []problemView{}}
	for _, p := range ch.Problems {
		out.Problems = append(out.Problems, problemView{Rule: p.Rule, Severity: string(p.Severity), Line: p.Line, Column: p.Column,
			EndLine: p.EndLine, Message: p.Message, Hint: p.Hint})
	}
	pv := ch.Preview
	out.Preview = draftPreviewView{Change: pv.Change, Number: pv.Number, ID: pv.ID, Name: pv.Name, Type: string(pv.Type),
		Status: string(pv.Status), Version: pv.Version, PreviousVersion: pv.PreviousVersion, Handler: pv.Handler,
		NextNumber: pv.NextNumber, Prerequisites: []prerequisiteView{}}
	for _, p := range pv.Prerequisites {
		out.Preview.Prerequisites = append(out.Preview.Prerequisites, prerequisiteView{ID: p.ID, Number: p.Number, Name: p.Name,
			Status: string(p.Status), Known: p.Number > 0})
	}
	return out
}

// validateSIP answers POST /api/v1/sips/validate: a SIP file's text is
// checked with the repository's rules against the registry's SIPs.
func (s *Server) validateSIP(c echo.Context) error {
	var req validateRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if req.Content == "" {
		return badRequest("content", "content is empty", "Send the SIP file's text (YAML frontmatter and Markdown) in content.")
	}
	ch, err := s.checkDraft(c.Request().Context(), []byte(req.Content), req.New)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, validateView(ch))
}

// mountContribute adds validation of proposed SIPs. Checking a file
// costs a parse and the repository's rules (a few milliseconds): an
// address checks at most two a second, in bursts of 60, enough for an
// editor that checks as its author types.
func (s *Server) mountContribute(e *echo.Echo) {
	checks := Limit{"sip-checks", 120, 60}
	e.POST("/api/v1/sips/validate", s.limited(checks, s.validateSIP))
	if s.serves.Results { // the site's pages
		s.mountContributePages(e, checks)
	}
}
