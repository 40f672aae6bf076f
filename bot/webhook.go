package bot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/google/go-github/v62/github"
	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry"
)

// MaxWebhookBody is GitHub's own cap on webhook payloads.
const MaxWebhookBody = 25 << 20

// WebhookPath is where GitHub sends the App's webhooks.
const WebhookPath = "/webhooks/github" // the path of api.WebhookPath

// handled lists the events and actions the App acts on; everything else
// is acknowledged and dropped (GitHub keeps adding events and actions).
var handled = map[string]map[string]bool{
	"pull_request": {"opened": true, "synchronize": true, "reopened": true, "edited": true, "ready_for_review": true,
		"closed": true},
	"pull_request_review":       {"submitted": true, "edited": true, "dismissed": true},
	"check_run":                 {"rerequested": true},
	"check_suite":               {"rerequested": true},
	"push":                      {"": true},
	"installation":              {"created": true, "deleted": true, "suspend": true, "unsuspend": true, "new_permissions_accepted": true},
	"installation_repositories": {"added": true, "removed": true},
	// Commands (/sip ...) are read from new comments only: an edited
	// comment is not a command.
	"issue_comment": {"created": true},
	"merge_group":   {"checks_requested": true},
}

// envelope is the part of a payload the intake reads to decide whether to
// keep a delivery and how to serialise its work.
type envelope struct {
	Action     string `json:"action"`
	Repository *struct {
		ID int64 `json:"id"`
	} `json:"repository"`
	Installation *struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	PullRequest *struct {
		Number int `json:"number"`
	} `json:"pull_request"`
	Issue *struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Changes *struct {
		Base json.RawMessage `json:"base"`
	} `json:"changes"`
	CheckRun *struct {
		PullRequests []struct {
			Number int `json:"number"`
		} `json:"pull_requests"`
	} `json:"check_run"`
	CheckSuite *struct {
		PullRequests []struct {
			Number int `json:"number"`
		} `json:"pull_requests"`
	} `json:"check_suite"`
}

// key serialises the work of a delivery: one pull request, one
// repository's pushes, one installation.
func (e *envelope) key(event string) string {
	repo := int64(0)
	if e.Repository != nil {
		repo = e.Repository.ID
	}
	switch event {
	case "pull_request", "pull_request_review":
		if e.PullRequest != nil {
			return pullKey(repo, e.PullRequest.Number)
		}
	case "check_run":
		if e.CheckRun != nil && len(e.CheckRun.PullRequests) > 0 {
			return pullKey(repo, e.CheckRun.PullRequests[0].Number)
		}
	case "check_suite":
		if e.CheckSuite != nil && len(e.CheckSuite.PullRequests) > 0 {
			return pullKey(repo, e.CheckSuite.PullRequests[0].Number)
		}
	case "push":
		return fmt.Sprintf("repo:%d/push", repo)
	case "merge_group":
		return fmt.Sprintf("repo:%d/merge_group", repo)
	case "issue_comment":
		// A command on a pull request is serialised with its checks; one
		// on an issue (an override of a refused commit) with the syncs.
		if e.Issue != nil && len(e.Issue.PullRequest) > 0 && string(e.Issue.PullRequest) != "null" {
			return pullKey(repo, e.Issue.Number)
		}
		return fmt.Sprintf("repo:%d/push", repo)
	case "installation", "installation_repositories":
		if e.Installation != nil {
			return fmt.Sprintf("installation:%d", e.Installation.ID)
		}
	}
	return ""
}

func pullKey(repo int64, n int) string { return fmt.Sprintf("repo:%d/pull:%d", repo, n) }

// Webhook receives a delivery: it verifies the signature on the raw
// bytes, stores the delivery, wakes a worker and answers 202, all before
// any processing. A delivery already processed answers 200 and is not
// processed again.
func (a *App) Webhook(c echo.Context) error {
	r := c.Request()
	if r.ContentLength > MaxWebhookBody {
		a.metrics.webhook("", "too_large")
		return echo.ErrStatusRequestEntityTooLarge
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		a.metrics.webhook("", "bad_request")
		return echo.ErrUnsupportedMediaType
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, MaxWebhookBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			a.metrics.webhook("", "too_large")
			return echo.ErrStatusRequestEntityTooLarge
		}
		return fmt.Errorf("reading the webhook body: %w", registry.ErrInvalid)
	}
	if !a.signed(r.Header.Get(github.SHA256SignatureHeader), body) {
		a.metrics.webhook("", "unauthorized")
		return fmt.Errorf("X-Hub-Signature-256 is missing or does not match the webhook secret: %w", registry.ErrUnauthorized)
	}
	event, id := r.Header.Get(github.EventTypeHeader), r.Header.Get(github.DeliveryIDHeader)
	if event == "" || id == "" || len(id) > 100 {
		a.metrics.webhook(event, "bad_request")
		return fmt.Errorf("X-GitHub-Event and X-GitHub-Delivery are required: %w", registry.ErrInvalid)
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		a.metrics.webhook(event, "bad_request")
		return fmt.Errorf("the payload is not JSON: %w", registry.ErrInvalid)
	}
	if !wanted(event, &env) {
		a.metrics.webhook(event, "ignored")
		return c.JSON(http.StatusAccepted, map[string]string{"delivery": id, "status": "ignored"})
	}
	status, _, err := a.store.EnqueueDelivery(r.Context(), &inbox.Delivery{ID: id, Event: event, Action: env.Action,
		Key: env.key(event), Payload: body, ReceivedAt: a.now().UTC()})
	if err != nil {
		// 503: GitHub records a failed delivery, which reconciliation
		// (or a person) redelivers; nothing is acknowledged unstored.
		a.metrics.webhook(event, "error")
		a.log.Error("cannot store a webhook delivery", "delivery", id, "event", event, "err", err)
		return fmt.Errorf("storing the delivery: %v: %w", err, registry.ErrUnavailable)
	}
	if status == inbox.Done {
		a.metrics.webhook(event, "duplicate")
		return c.JSON(http.StatusOK, map[string]string{"delivery": id, "status": "duplicate"})
	}
	a.metrics.webhook(event, "queued")
	a.notify()
	return c.JSON(http.StatusAccepted, map[string]string{"delivery": id, "status": "queued"})
}

// signed checks the HMAC-SHA256 signature against every configured
// secret, in constant time; sha1 signatures are refused.
func (a *App) signed(sig string, body []byte) bool {
	if len(sig) < 7 || sig[:7] != "sha256=" {
		return false
	}
	for _, s := range a.cfg.WebhookSecrets {
		if github.ValidateSignature(sig, body, []byte(s)) == nil {
			return true
		}
	}
	return false
}

// wanted says whether the App acts on an event: a pull request edited
// only in its title or body is not worth a check.
func wanted(event string, env *envelope) bool {
	actions, ok := handled[event]
	if !ok || !actions[env.Action] {
		return false
	}
	if event == "pull_request" && env.Action == "edited" {
		return env.Changes != nil && len(env.Changes.Base) > 0
	}
	return true
}
