package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/proposal"
)

// Proposals is the contribution editor's service for people signed in
// with GitHub (registry/proposal): sign-in, drafts kept on the server,
// and pull requests opened as their author.
type Proposals interface {
	Repository() string
	SignInOrigin() string // GitHub's sign-in page's scheme://host
	MaxDrafts() int
	MaxDraftBytes() int
	BeginSignIn(ctx context.Context, redirectURI string, carry proposal.Draft) (state, authorizeURL string, err error)
	FinishSignIn(ctx context.Context, state, code, redirectURI string) (proposal.SignedIn, error)
	Person(ctx context.Context, session string) (string, error)
	SignOut(ctx context.Context, session string) error
	Claimed(ctx context.Context, session string) (map[int]string, error)
	Propose(ctx context.Context, session string, p proposal.Proposal) (proposal.Opened, error)
	PullStatus(ctx context.Context, session string, number int) (proposal.Status, error)
	SaveDraft(ctx context.Context, session string, d proposal.Draft) (string, error)
	Drafts(ctx context.Context, session string) ([]proposal.Draft, error)
	Draft(ctx context.Context, session, id string) (proposal.Draft, error)
	DeleteDraft(ctx context.Context, session, id string) error
}

// The cookies of sign-in: sessionCookie holds the session's random value
// (the database keeps its hash); signInCookie binds a sign-in's state to
// the browser that began it. Both are HttpOnly and SameSite=Lax (GitHub's
// redirect back is a cross-site navigation that must carry them).
const (
	sessionCookie = "sip_session"
	signInCookie  = "sip_signin"
	callbackPath  = "/contribute/callback"
)

func (s *Server) secureCookies() bool { return strings.HasPrefix(s.baseURL, "https://") }

func (s *Server) setCookie(c echo.Context, name, value, path string, maxAge int) {
	c.SetCookie(&http.Cookie{Name: name, Value: value, Path: path, MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: s.secureCookies()})
}

// sessionOf is the browser's session value ("" when none).
func sessionOf(c echo.Context) string {
	if ck, err := c.Cookie(sessionCookie); err == nil {
		return ck.Value
	}
	return ""
}

// person is the signed-in person of the request ("" when none, or when
// sign-in is off).
func (s *Server) person(c echo.Context) string {
	if s.proposals == nil {
		return ""
	}
	sess := sessionOf(c)
	if sess == "" {
		return ""
	}
	login, err := s.proposals.Person(c.Request().Context(), sess)
	if err != nil {
		if !errors.Is(err, registry.ErrUnauthorized) {
			s.log.Warn("reading an editor session", "error", err)
		}
		return ""
	}
	return login
}

func forbiddenForm() error {
	return &Error{Status: http.StatusForbidden, Code: "forbidden", Message: "the form's token does not match this browser's",
		Hint: "Open the editor again from /contribute and send the form from there."}
}

// signIn answers POST /contribute/signin: a sign-in begins, its state
// bound to this browser, and the browser goes to GitHub. Sent from the
// editor (its sign-in button submits the editor's form here), the form's
// fields travel with the sign-in, kept on the server, and come back as the
// person's draft.
func (s *Server) signIn(c echo.Context) error {
	if !s.validCSRF(c) {
		return forbiddenForm()
	}
	var carry proposal.Draft
	var page contributePage
	if c.FormValue("mode") != "" {
		page = s.editorPage(c, c.FormValue("mode"))
		s.fillEditor(&page, c.FormValue)
		carry = draftOf(c.FormValue, &page)
	}
	state, to, err := s.proposals.BeginSignIn(c.Request().Context(), s.baseURL+callbackPath, carry)
	if errors.Is(err, registry.ErrTooLarge) && carry.Content != "" {
		page.Notice = fmt.Sprintf("The form is over %d KiB, more than a sign-in may carry: download the file first, or shorten it, then sign in.", s.proposals.MaxDraftBytes()>>10)
		if page.FileError == "" {
			if err := s.checkPage(c, &page); err != nil {
				return err
			}
		}
		return s.renderEditor(c, page)
	}
	if err != nil {
		return err
	}
	s.setCookie(c, signInCookie, state, callbackPath, int(proposal.DefaultSignInTTL.Seconds()))
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusSeeOther, to)
}

// signInCallback answers GitHub's redirect back: the state must be this
// browser's (its cookie) and one this server began and has not used; the
// code becomes a session. A form the sign-in carried opens again in the
// editor, saved as the person's draft.
func (s *Server) signInCallback(c echo.Context) error {
	state := c.QueryParam("state")
	ck, err := c.Cookie(signInCookie)
	s.setCookie(c, signInCookie, "", callbackPath, -1) // used once, whatever happens
	refused := &Error{Status: http.StatusBadRequest, Code: "sign_in_failed", Message: "this sign-in was not started in this browser, was used already, or took too long",
		Hint: "Sign in again from /contribute."}
	if err != nil || state == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(state)) != 1 {
		return refused
	}
	if e := c.QueryParam("error"); e != "" {
		return &Error{Status: http.StatusBadRequest, Code: "sign_in_failed", Message: "GitHub did not sign you in (" + e + ")",
			Hint: "Sign in again from /contribute, and authorise the App."}
	}
	in, err := s.proposals.FinishSignIn(c.Request().Context(), state, c.QueryParam("code"), s.baseURL+callbackPath)
	switch {
	case errors.Is(err, proposal.ErrSignIn):
		return refused
	case errors.Is(err, registry.ErrUnauthorized):
		return &Error{Status: http.StatusBadRequest, Code: "sign_in_failed", Message: "GitHub did not accept the sign-in", Hint: "Sign in again from /contribute.", Err: err}
	case err != nil:
		return err
	}
	s.log.Info("signed in to the editor", "login", in.Login)
	s.setCookie(c, sessionCookie, in.Session, "/contribute", int(proposal.DefaultSessionTTL.Seconds()))
	switch {
	case in.Form == nil:
		return c.Redirect(http.StatusSeeOther, "/contribute")
	case in.Form.ID != "":
		return c.Redirect(http.StatusSeeOther, "/contribute/drafts/"+url.PathEscape(in.Form.ID))
	}
	// Kept, but not as a draft (the person's drafts are full): the editor
	// with the form, here.
	form, err := url.ParseQuery(in.Form.Content)
	if err != nil {
		return fmt.Errorf("the form a sign-in carried: %w", err)
	}
	page := s.editorPage(c, form.Get("mode"))
	page.Login = in.Login
	s.fillEditor(&page, form.Get)
	page.Notice = "Signed in. Your form is back, but not saved as a draft: " + draftRefusal(in.NotSaved, s.proposals)
	if page.FileError == "" {
		if err := s.checkPage(c, &page); err != nil {
			return err
		}
	}
	return s.renderEditor(c, page)
}

// draftRefusal says why a draft was not saved, and what to do.
func draftRefusal(err error, p Proposals) string {
	if errors.Is(err, registry.ErrDraftLimit) {
		return fmt.Sprintf("you keep %d drafts already, the most there may be: delete one on My drafts to save this one.", p.MaxDrafts())
	}
	return fmt.Sprintf("it is over %d KiB, more than a draft may hold: shorten it, or download the file.", p.MaxDraftBytes()>>10)
}

// signOut answers POST /contribute/signout.
func (s *Server) signOut(c echo.Context) error {
	if !s.validCSRF(c) {
		return forbiddenForm()
	}
	if sess := sessionOf(c); sess != "" {
		if err := s.proposals.SignOut(c.Request().Context(), sess); err != nil {
			return err
		}
	}
	s.setCookie(c, sessionCookie, "", "/contribute", -1)
	return c.Redirect(http.StatusSeeOther, "/contribute")
}

// draftFields are the editor's form fields a draft keeps.
var draftFields = []string{"mode", "edit", "type", "sip", "id", "name", "module", "status", "author", "prerequisites", "points",
	"created_at", "updated_at", "version", "handler", "config", "body", "file", "note"}

// draftOf is the editor's form as a draft keeps it.
func draftOf(get func(string) string, page *contributePage) proposal.Draft {
	form := url.Values{}
	for _, f := range draftFields {
		if v := get(f); v != "" {
			form.Set(f, v)
		}
	}
	title := page.Edit
	if page.Mode == "fields" {
		title = strings.TrimSpace(cmpOr(page.F.Name, page.F.ID, "a new "+string(page.F.Type)))
	} else if d := registry.Parse("SIP.md", []byte(page.File)); title == "" && d.SIP != nil {
		title = d.SIP.Name
	}
	return proposal.Draft{ID: get("draft"), Title: cmpOr(title, "a SIP"), Mode: page.Mode, Edit: page.Edit, Content: form.Encode()}
}

// saveDraft keeps the editor's form for its signed-in person.
func (s *Server) saveDraft(c echo.Context, page *contributePage) error {
	id, err := s.proposals.SaveDraft(c.Request().Context(), sessionOf(c), draftOf(c.FormValue, page))
	switch {
	case errors.Is(err, registry.ErrDraftLimit), errors.Is(err, registry.ErrTooLarge):
		page.Notice = "The draft is not saved: " + draftRefusal(err, s.proposals)
	case errors.Is(err, registry.ErrUnauthorized):
		page.Notice = "Sign in again to save drafts: your sign-in ended."
	case errors.Is(err, registry.ErrNotFound):
		page.Notice = "That draft is gone (deleted?): save again to keep this one as a new draft."
		page.DraftID = ""
	case err != nil:
		return err
	default:
		page.DraftID, page.Saved = id, true
	}
	if page.FileError == "" {
		if err := s.checkPage(c, page); err != nil {
			return err
		}
	}
	return s.renderEditor(c, *page)
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// proposeFile opens the pull request of the editor's file as its
// signed-in author, and sends them to its status.
func (s *Server) proposeFile(c echo.Context, page *contributePage) error {
	if page.FileError != "" {
		return s.renderEditor(c, *page)
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
	content := []byte(page.File)
	opened, err := s.proposals.Propose(ctx, sessionOf(c), proposal.Proposal{Content: content, Draft: page.PullDraft, Note: page.Note,
		Check: func(claimed map[int]string) registry.DraftCheck {
			d := *dc
			d.Options.Claimed = claimed
			return registry.CheckDraft(d, registry.Draft{Content: content, New: page.Edit == ""})
		}})
	var refused *proposal.Refused
	switch {
	case err == nil:
		s.log.Info("pull request opened from the editor", "login", page.Login, "pull_request", opened.Number, "fork", opened.Fork)
		return c.Redirect(http.StatusSeeOther, "/contribute/pulls/"+strconv.Itoa(opened.Number))
	case errors.As(err, &refused) && refused.Taken && page.Mode == "fields":
		taken := page.F.Number
		page.F.Number = refused.NextNumber
		file, ferr := page.F.File()
		if ferr != nil {
			return ferr
		}
		page.File = string(file)
		page.Notice = fmt.Sprintf("SIP-%d was taken by another pull request since your preview (the earliest open pull request keeps a number). The form now takes SIP-%d, the next free number: check it and open the pull request again.",
			taken, refused.NextNumber)
	case errors.As(err, &refused) && refused.Taken:
		page.Notice = fmt.Sprintf("SIP-%d was taken by another pull request since your preview (the earliest open pull request keeps a number): set sip: %d in the file, then open the pull request again.",
			refused.Check.Preview.Number, refused.NextNumber)
	case errors.As(err, &refused):
		page.Notice = "The file does not pass the repository's rules: fix the errors below, then open the pull request again."
	case errors.Is(err, proposal.ErrSignedOut):
		page.Notice, page.Login = "Your sign-in ended: sign in again (your form comes back with you), then open the pull request.", ""
	case errors.Is(err, registry.ErrForbidden), errors.Is(err, registry.ErrConflict), errors.Is(err, registry.ErrNotFound),
		errors.Is(err, registry.ErrInvalid), errors.Is(err, registry.ErrTooLarge), errors.Is(err, registry.ErrUnauthorized):
		page.Notice = "GitHub did not open the pull request: " + err.Error() + "."
	case errors.Is(err, registry.ErrUnavailable):
		s.log.Warn("opening a pull request from the editor", "login", page.Login, "error", err)
		page.Notice = "GitHub could not be reached or refused for now; nothing was lost: try again in a minute."
	default:
		return err
	}
	if err := s.checkPage(c, page); err != nil {
		return err
	}
	return s.renderEditor(c, *page)
}

type pullPage struct {
	pageBase
	Login      string
	Repository string
	P          proposal.Status
	Refresh    bool // checks still running: the page reloads itself
	Notice     string
}

// contributePull serves /contribute/pulls/{n}: a pull request's checks
// and approval, reloading itself (no script) while checks run.
func (s *Server) contributePull(c echo.Context) error {
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil || n < 1 {
		return notFound("no pull request "+quote(c.Param("n")), "Open it from the editor.")
	}
	page := pullPage{pageBase: pageBase{Title: "Pull request #" + strconv.Itoa(n), Nav: "contribute", Version: s.version},
		Login: s.person(c), Repository: s.proposals.Repository()}
	if page.Login == "" {
		return &Error{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "sign in with GitHub to follow your pull requests",
			Hint: "Sign in from /contribute."}
	}
	st, err := s.proposals.PullStatus(c.Request().Context(), sessionOf(c), n)
	if err != nil {
		if !errors.Is(err, registry.ErrNotFound) && !errors.Is(err, registry.ErrUnavailable) {
			return err
		}
		page.Notice, page.Refresh = "GitHub did not answer about this pull request for now: "+err.Error()+".", true
	}
	page.P = st
	if st.State == "open" {
		page.Refresh = len(st.Checks) == 0
		for _, ch := range st.Checks {
			page.Refresh = page.Refresh || ch.Status != "completed"
		}
	}
	body, err := executePage("contribute_pull", page)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	return c.HTMLBlob(http.StatusOK, body)
}

type draftsPage struct {
	pageBase
	Login  string
	CSRF   string
	Drafts []proposal.Draft
	Max    int
}

// contributeDrafts serves /contribute/drafts: the person's drafts.
func (s *Server) contributeDrafts(c echo.Context) error {
	page := draftsPage{pageBase: pageBase{Title: "My drafts", Nav: "contribute", Version: s.version}, Login: s.person(c),
		CSRF: s.csrfToken(c), Max: s.proposals.MaxDrafts()}
	if page.Login == "" {
		return c.Redirect(http.StatusSeeOther, "/contribute")
	}
	var err error
	if page.Drafts, err = s.proposals.Drafts(c.Request().Context(), sessionOf(c)); err != nil {
		return err
	}
	body, err := executePage("contribute_drafts", page)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	return c.HTMLBlob(http.StatusOK, body)
}

// contributeDraft serves /contribute/drafts/{id}: the editor with a
// draft's form, checked.
func (s *Server) contributeDraft(c echo.Context) error {
	d, err := s.proposals.Draft(c.Request().Context(), sessionOf(c), c.Param("id"))
	if errors.Is(err, registry.ErrUnauthorized) {
		return c.Redirect(http.StatusSeeOther, "/contribute")
	}
	if err != nil {
		return err
	}
	form, err := url.ParseQuery(d.Content)
	if err != nil {
		return fmt.Errorf("draft %s: %w", d.ID, err)
	}
	page := s.editorPage(c, form.Get("mode"))
	s.fillEditor(&page, form.Get)
	page.DraftID = d.ID
	if page.FileError == "" {
		if err := s.checkPage(c, &page); err != nil {
			return err
		}
	}
	return s.renderEditor(c, page)
}

// deleteDraft answers POST /contribute/drafts/{id}/delete.
func (s *Server) deleteDraft(c echo.Context) error {
	if !s.validCSRF(c) {
		return forbiddenForm()
	}
	err := s.proposals.DeleteDraft(c.Request().Context(), sessionOf(c), c.Param("id"))
	if err != nil && !errors.Is(err, registry.ErrNotFound) {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/contribute/drafts")
}

// mountSignIn adds sign-in, drafts and pull requests, when the server has
// the service.
func (s *Server) mountSignIn(e *echo.Echo) {
	if s.proposals == nil {
		return
	}
	writes := Limit{"editor-writes", 30, 30}
	e.POST("/contribute/signin", s.limited(writes, s.signIn))
	e.GET(callbackPath, s.limited(writes, s.signInCallback))
	e.POST("/contribute/signout", s.signOut)
	e.GET("/contribute/drafts", s.contributeDrafts)
	e.GET("/contribute/drafts/:id", s.contributeDraft)
	e.POST("/contribute/drafts/:id/delete", s.deleteDraft)
	e.GET("/contribute/pulls/:n", s.contributePull)
}
