package api

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sipregistry/sip/registry"
)

// The contribution editor: /contribute chooses a type, /contribute/new
// is a form per type, /contribute/edit/{ref} is a SIP's file prepared for
// a change. Every step posts to /contribute, which checks the file with
// the repository's rules against the registry and shows the problems, the
// file, the SIP's page as it would be published and what a merge would
// change. /static/contribute.js only re-posts the form as its author
// types; without it the page works the same, one press at a time.

// csrfCookie holds the token every form of the editor sends back
// (double submit): a form posted from another site has no way to read it.
const csrfCookie = "sip_csrf"

// newFileURLLimit bounds the GitHub new-file link: browsers and GitHub
// refuse much longer addresses; past it the page offers the download.
const newFileURLLimit = 8000

type contributeType struct {
	Type     registry.Type
	Name     string
	Handlers []string
}

type contributePage struct {
	pageBase
	Types []contributeType // the chooser
	Mode  string           // "fields" (a new SIP from its parts) or "file" (the whole file)
	Edit  string           // the SIP being changed, for the heading
	CSRF  string
	F     registry.DraftFields
	// Form values as written (the prerequisites as one line).
	Prerequisites string
	Handlers      []string
	Statuses      []registry.Status
	File          string
	Checked       bool
	FileError     string // the fields could not be written as a file
	Check         registry.DraftCheck
	Errors        int
	Warnings      int
	Page          template.HTML // the SIP's page as it would be published
	Chain         []*registry.Entry
	NewFileURL    string // GitHub's new-file page, prefilled; empty when too long or no repository
	UploadURL     string // GitHub's upload page, when the link would be too long
	EditURL       string // GitHub's edit page of the file, for a change
	SourceURL     string // the file the registry serves, for a change
	Repository    string
	// Signing in with GitHub (when the server has the service).
	SignIn    bool   // sign-in is on
	Login     string // the signed-in person ("" when nobody)
	DraftID   string // the saved draft the form is (replaced when saved again)
	Saved     bool   // the draft was just saved
	Note      string // the person's words for the pull request
	PullDraft bool   // open the pull request as a draft
	Notice    string // what the last action could not do, and what to do
}

// contributeIndex serves /contribute: choose what to propose.
func (s *Server) contributeIndex(c echo.Context) error {
	page := contributePage{pageBase: pageBase{Title: "Propose a SIP", Nav: "contribute", Version: s.version}}
	for _, t := range registry.Types {
		page.Types = append(page.Types, contributeType{Type: t, Name: strings.ReplaceAll(string(t), "_", " "), Handlers: registry.HandlersFor(t)})
	}
	page.Repository = s.repositoryURL()
	if s.proposals != nil {
		page.SignIn, page.Login, page.CSRF = true, s.person(c), s.csrfToken(c)
		if page.Repository == "" {
			page.Repository = s.proposals.SignInOrigin() + "/" + s.proposals.Repository()
		}
		// The page holds the form's token: never cached.
		body, err := executePage("contribute", page)
		if err != nil {
			return err
		}
		h := c.Response().Header()
		h.Set("Content-Security-Policy", s.editorPolicy())
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		return c.HTMLBlob(http.StatusOK, body)
	}
	return s.renderPage(c, http.StatusOK, "contribute", page)
}

// contributeNew serves /contribute/new?type=T: the form of a new SIP of
// that type, filled with the next free number and the type's example.
func (s *Server) contributeNew(c echo.Context) error {
	t := registry.Type(c.QueryParam("type"))
	if !slices.Contains(registry.Types, t) {
		return badRequest("type", "unknown type "+quote(string(t)), "Choose a type on /contribute.")
	}
	ctx := c.Request().Context()
	snap, err := s.catalog.current(ctx)
	if err != nil {
		return err
	}
	dc, _, err := s.draftContext(ctx, snap)
	if err != nil {
		return err
	}
	page := s.editorPage(c, "fields")
	next := dc.NextNumber()
	if page.Login != "" {
		// Signed in, the numbers open pull requests claim are known too.
		claimed, err := s.proposals.Claimed(ctx, sessionOf(c))
		if err != nil {
			s.log.Warn("reading the numbers open pull requests claim", "error", err)
		} else {
			d := *dc
			d.Options.Claimed = claimed
			next = d.NextNumber()
		}
	}
	page.F = registry.NewDraftFields(t, next, s.now())
	return s.renderEditor(c, page)
}

// contributeEdit serves /contribute/edit/{ref}: a SIP's file with the
// edit rules applied (version raised, updated_at now), to change.
func (s *Server) contributeEdit(c echo.Context) error {
	ctx := c.Request().Context()
	snap, err := s.catalog.current(ctx)
	if err != nil {
		return err
	}
	e := snap.lookup(c.Param("ref"))
	if e == nil || e.Removed {
		return notFound("no SIP "+quote(c.Param("ref")), "See /evaluations for the list.")
	}
	_, sources, err := s.draftContext(ctx, snap)
	if err != nil {
		return err
	}
	page := s.editorPage(c, "file")
	page.Edit = "SIP-" + strconv.Itoa(e.Number)
	page.Title = "Propose a change to SIP-" + strconv.Itoa(e.Number)
	page.File = string(registry.EditDraft(sources[e.ID], s.now()))
	page.SourceURL = s.sourceURL(snap, e)
	return s.renderEditor(c, page)
}

// contributeCheck answers POST /contribute: the form's file checked, or,
// with action=download, the file itself.
func (s *Server) contributeCheck(c echo.Context) error {
	page := s.editorPage(c, c.FormValue("mode"))
	if !s.validCSRF(c) {
		return &Error{Status: http.StatusForbidden, Code: "forbidden", Message: "the form's token does not match this browser's",
			Hint: "Open the editor again from /contribute and send the form from there."}
	}
	s.fillEditor(&page, c.FormValue)
	switch c.FormValue("action") {
	case "save", "propose":
		if page.Login == "" {
			page.Notice = "Sign in with GitHub to save drafts and open pull requests (your sign-in may have ended)."
			break
		}
		if c.FormValue("action") == "save" {
			return s.saveDraft(c, &page)
		}
		return s.proposeFile(c, &page)
	}
	if c.FormValue("action") == "download" && page.FileError == "" {
		name := "SIP-draft.md"
		if d := registry.Parse("SIP.md", []byte(page.File)); d.SIP != nil && d.SIP.Number > 0 {
			name = registry.FileName(d.SIP.Number)
		}
		h := c.Response().Header()
		h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
		h.Set("Cache-Control", "no-store")
		return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(page.File))
	}
	if page.FileError == "" {
		if err := s.checkPage(c, &page); err != nil {
			return err
		}
	}
	if c.FormValue("partial") == "1" {
		// The script swaps in the results only.
		var buf bytes.Buffer
		if err := webPages()["contribute_editor"].ExecuteTemplate(&buf, "results", page); err != nil {
			return err
		}
		h := c.Response().Header()
		h.Set("Content-Security-Policy", s.editorPolicy())
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		return c.HTMLBlob(http.StatusOK, buf.Bytes())
	}
	return s.renderEditor(c, page)
}

// editorCSP is the site's policy with the editor's own script (and the
// requests it makes to this origin) allowed: nothing inline.
const editorCSP = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self' https: data:; form-action 'self' https://github.com; frame-ancestors 'none'; base-uri 'none'"

// editorPolicy is editorCSP, with GitHub's sign-in page (where the
// sign-in form's answer leads) allowed as a form's destination.
func (s *Server) editorPolicy() string {
	if s.proposals == nil {
		return editorCSP
	}
	o := s.proposals.SignInOrigin()
	if o == "" || o == "https://github.com" {
		return editorCSP
	}
	return strings.Replace(editorCSP, "form-action 'self' https://github.com", "form-action 'self' https://github.com "+o, 1)
}

// renderEditor writes the editor: never cached (it holds the form's
// token), never framed.
func (s *Server) renderEditor(c echo.Context, page contributePage) error {
	if page.Mode == "fields" {
		page.Handlers = registry.HandlersFor(page.F.Type)
		if page.Prerequisites == "" {
			page.Prerequisites = strings.Join(page.F.Prerequisites, ", ")
		}
	}
	body, err := executePage("contribute_editor", page)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", s.editorPolicy())
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	return c.HTMLBlob(http.StatusOK, body)
}

// checkPage checks the page's file and fills in what the page shows of
// the result.
func (s *Server) checkPage(c echo.Context, page *contributePage) error {
	ctx := c.Request().Context()
	snap, err := s.catalog.current(ctx)
	if err != nil {
		return err
	}
	dc, _, err := s.draftContext(ctx, snap)
	if err != nil {
		return err
	}
	ch := registry.CheckDraft(*dc, registry.Draft{Content: []byte(page.File), New: page.Edit == ""})
	page.Checked, page.Check = true, ch
	page.Errors, page.Warnings = registry.Count(ch.Problems)
	if ch.Entry != nil {
		ev := evaluationPage{pageBase: page.pageBase, E: ch.Entry, Body: s.markdown.render("", ch.Entry.Body), // a draft: never cached
			Chain: chain(snap, ch.Entry)}
		var buf bytes.Buffer
		if err := webPages()["evaluation"].ExecuteTemplate(&buf, "content", ev); err != nil {
			return err
		}
		page.Page = template.HTML(buf.String()) //nolint:gosec // rendered by html/template, the body sanitised
	}
	if repo := s.repositoryURL(); repo != "" && ch.Preview.Change != "new" {
		page.EditURL = repo + "/edit/" + url.PathEscape(s.sourceBranch) + "/" + ch.Path
	} else if repo != "" {
		u := repo + "/new/" + url.PathEscape(s.sourceBranch) + "?" + url.Values{"filename": {ch.Path}, "value": {page.File}}.Encode()
		if len(u) <= newFileURLLimit {
			page.NewFileURL = u
		} else {
			page.UploadURL = repo + "/upload/" + url.PathEscape(s.sourceBranch) + "/" + dirOf(ch.Path)
		}
	}
	return nil
}

func dirOf(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[:i]
	}
	return ""
}

// fillEditor reads the editor's form (posted, or a saved draft's).
func (s *Server) fillEditor(page *contributePage, get func(string) string) {
	page.Edit = get("edit")
	if page.Mode == "fields" {
		page.F = fieldsOf(get)
		page.Prerequisites = get("prerequisites")
		file, err := page.F.File()
		if err != nil {
			page.FileError = err.Error()
		}
		page.File = string(file)
	} else {
		page.File = strings.ReplaceAll(get("file"), "\r\n", "\n")
	}
	if page.File == "" && page.FileError == "" {
		page.FileError = "the file is empty"
	}
	page.DraftID, page.Note, page.PullDraft = get("draft"), get("note"), get("pull_draft") != ""
}

// editorPage is the editor's page with its token (set as a cookie when
// the browser has none).
func (s *Server) editorPage(c echo.Context, mode string) contributePage {
	if mode != "file" {
		mode = "fields"
	}
	page := contributePage{pageBase: pageBase{Title: "Propose a SIP", Nav: "contribute", Version: s.version}, Mode: mode,
		Statuses: registry.Statuses, CSRF: s.csrfToken(c), Repository: s.repositoryURL()}
	if s.proposals != nil {
		page.SignIn, page.Login = true, s.person(c)
	}
	return page
}

func (s *Server) csrfToken(c echo.Context) string {
	if ck, err := c.Cookie(csrfCookie); err == nil && len(ck.Value) == 43 {
		return ck.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	c.SetCookie(&http.Cookie{Name: csrfCookie, Value: tok, Path: "/contribute", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: strings.HasPrefix(s.baseURL, "https://")})
	return tok
}

// validCSRF reports whether the form's token is the browser's cookie.
func (s *Server) validCSRF(c echo.Context) bool {
	ck, err := c.Cookie(csrfCookie)
	form := c.FormValue("csrf")
	return err == nil && len(ck.Value) == 43 && subtle.ConstantTimeCompare([]byte(ck.Value), []byte(form)) == 1
}

// fieldsOf reads a new SIP's fields from the form.
func fieldsOf(get func(string) string) registry.DraftFields {
	n, _ := strconv.Atoi(strings.TrimSpace(get("sip")))
	var pre []string
	for _, p := range strings.Split(get("prerequisites"), ",") {
		if p = strings.TrimSpace(p); p != "" {
			pre = append(pre, p)
		}
	}
	return registry.DraftFields{
		Number: n, ID: strings.TrimSpace(get("id")), Name: get("name"), Module: strings.TrimSpace(get("module")),
		Type: registry.Type(get("type")), Status: registry.Status(get("status")), Prerequisites: pre,
		Author: get("author"), CreatedAt: get("created_at"), UpdatedAt: get("updated_at"),
		Version: strings.TrimSpace(get("version")), Points: get("points"), Handler: get("handler"),
		Config: strings.ReplaceAll(get("config"), "\r\n", "\n"), Body: strings.ReplaceAll(get("body"), "\r\n", "\n"),
	}
}

// repositoryURL is the GitHub repository the registry follows, from the
// commit links it was given ("" when it follows none).
func (s *Server) repositoryURL() string {
	repo, ok := strings.CutSuffix(s.commitURL, "/commit/{sha}")
	if !ok || !strings.HasPrefix(repo, "https://") {
		return ""
	}
	return repo
}

// sourceURL is the file an entry was synced from, at the commit the
// registry serves.
func (s *Server) sourceURL(snap *snapshot, e *registry.Entry) string {
	repo := s.repositoryURL()
	if repo == "" || snap.state.CommitSHA == "" {
		return ""
	}
	return repo + "/blob/" + url.PathEscape(snap.state.CommitSHA) + "/" + e.Path
}

// mountContributePages adds the editor's pages.
func (s *Server) mountContributePages(e *echo.Echo, checks Limit) {
	e.GET("/contribute", s.contributeIndex)
	e.GET("/contribute/new", s.contributeNew)
	e.GET("/contribute/edit/:ref", s.contributeEdit)
	e.POST("/contribute", s.limited(checks, s.contributeCheck))
	s.mountSignIn(e)
}
