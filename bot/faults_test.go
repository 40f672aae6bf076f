package bot_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry/siptest"
)

// openSIPPull opens a pull request that adds a valid SIP-9.
func (h *harness) openSIPPull(branch string) *githubtest.Pull {
	sip := siptest.SIP(9, "identity-nine", "draft")
	h.gh.Push(h.repo, branch, map[string]string{sip.Path: string(sip.Content)})
	return h.gh.OpenPull(h.repo, branch, "author")
}

// TestDuplicateDeliveryIsProcessedOnce: the same delivery id again is
// answered 200 and not processed; the same event under a new id (GitHub
// sends several for one push) posts nothing twice.
func TestDuplicateDeliveryIsProcessedOnce(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.run()
		pr := h.openSIPPull("add")
		guid := newGUID()
		if code := h.deliver("pull_request", guid, h.pullEvent("opened", pr)); code != 202 {
			t.Fatalf("status %d", code)
		}
		head := h.gh.HeadSHA(pr)
		h.waitCheck(head, bot.ValidationCheck, "completed", "success")
		eventually(t, "the delivery done", func() bool {
			d, err := h.store.Delivery(t.Context(), guid)
			return err == nil && d.Status == inbox.Done
		})
		if code := h.deliver("pull_request", guid, h.pullEvent("opened", pr)); code != http.StatusOK {
			t.Errorf("the same delivery again: status %d, want 200", code)
		}
		other := newGUID()
		h.deliver("pull_request", other, h.pullEvent("reopened", pr))
		eventually(t, "the second delivery done", func() bool {
			d, err := h.store.Delivery(t.Context(), other)
			return err == nil && d.Status == inbox.Done
		})
		if runs := h.gh.CheckRuns(head, bot.ValidationCheck); len(runs) != 1 {
			t.Errorf("%d validation runs, want 1", len(runs))
		}
		if runs := h.gh.CheckRuns(head, bot.ApprovalCheck); len(runs) != 1 {
			t.Errorf("%d approval runs, want 1", len(runs))
		}
		if cs := h.gh.Comments(h.repo, pr.Number); len(cs) != 1 || cs[0].Edits != 0 {
			t.Errorf("comments = %+v, want one, never edited", cs)
		}
	})
}

// onPull matches reading pull request #1. The delivery's work does, and
// so does the check of it that start-up reconciliation queues (an open
// pull request with no check run).
func onPull(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/pulls/1") }

// faulted counts the requests that match which GitHub answered status.
func (h *harness) faulted(status int, match func(*http.Request) bool) int {
	n := 0
	for _, r := range h.gh.Requests() {
		if r.Status == status && match(&http.Request{Method: r.Method, URL: &url.URL{Path: r.Path}}) {
			n++
		}
	}
	return n
}

// TestGitHubFaults: GitHub failing, rate limiting, or refusing tokens
// delays the work; once it recovers the check run appears, once.
//
// Start-up reconciliation talks to the same fake GitHub: the refresh of
// the installation it queues mints the installation token, and the sync
// and the check of the open pull request queued after it create check
// runs and read the pull request. Left to race the delivery, that work
// usually meets one of the faults first, retries 100 ms later, and so
// meets the rest too when the delivery is that late (a busy machine): the
// delivery then succeeds at once. So reconciliation is held at its first
// request until the delivery has met the fault: until then the
// delivery's work is GitHub's only client.
func TestGitHubFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		status int
		header http.Header
		match  func(*http.Request) bool
	}{
		{"500s", 3, 500, nil, onPull},
		{"502 on creating the check run", 2, 502, nil, func(r *http.Request) bool { return r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/check-runs") }},
		{"secondary rate limit", 1, 403, http.Header{"Retry-After": {"1"}}, onPull},
		{"429 with Retry-After", 2, 429, http.Header{"Retry-After": {"1"}}, onPull},
		{"401 on the token endpoint", 2, 401, nil, func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/access_tokens") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
				h := newHarness(t, open(t))
				pr := h.openSIPPull("add")
				held, release := h.gh.Hold(func(r *http.Request) bool {
					return r.Method == "GET" && r.URL.Path == "/app/hook/deliveries" // reconciliation's first request
				})
				defer release()
				h.gh.Fail(tc.n, tc.status, tc.header, tc.match)
				h.run()
				eventually(t, "reconciliation held", func() bool {
					select {
					case <-held:
						return true
					default:
						return false
					}
				})
				if rs := h.gh.Requests(); len(rs) > 0 {
					t.Fatalf("GitHub was asked %+v before reconciliation was held", rs)
				}
				guid := newGUID()
				h.deliver("pull_request", guid, h.pullEvent("opened", pr))
				eventually(t, "the delivery's work answered with the fault", func() bool { return h.faulted(tc.status, tc.match) > 0 })
				release()
				head := h.gh.HeadSHA(pr)
				h.waitCheck(head, bot.ValidationCheck, "completed", "success")
				h.waitCheck(head, bot.ApprovalCheck, "in_progress", "")
				eventually(t, "the delivery done", func() bool {
					d, err := h.store.Delivery(t.Context(), guid)
					return err == nil && d.Status == inbox.Done
				})
				d, _ := h.store.Delivery(t.Context(), guid)
				if d.Attempts < 2 {
					t.Errorf("attempts = %d; the fault was never met", d.Attempts)
				}
				if runs := h.gh.CheckRuns(head, bot.ValidationCheck); len(runs) != 1 {
					t.Errorf("%d validation runs, want exactly 1", len(runs))
				}
				if cs := h.gh.Comments(h.repo, pr.Number); len(cs) != 1 {
					t.Errorf("%d comments, want 1", len(cs))
				}
			})
		})
	}
}

// TestDeadDeliveryIsRedeliveredByItsID: after the last attempt a delivery
// is dead (kept, with its error); GitHub's redelivery reuses the id and
// queues it again.
func TestDeadDeliveryIsRedeliveredByItsID(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t), func(c *bot.Config) { c.MaxAttempts = 2 })
		pr := h.openSIPPull("add")
		h.gh.Fail(-1, 503, nil, func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/pulls/") })
		h.run()
		guid := newGUID()
		event := h.pullEvent("opened", pr)
		h.deliver("pull_request", guid, event)
		eventually(t, "the delivery dead", func() bool {
			d, err := h.store.Delivery(t.Context(), guid)
			return err == nil && d.Status == inbox.Dead && strings.Contains(d.LastError, "503")
		})
		h.gh.Heal()
		if code := h.deliver("pull_request", guid, event); code != 202 {
			t.Fatalf("redelivery: status %d, want 202", code)
		}
		h.waitCheck(h.gh.HeadSHA(pr), bot.ValidationCheck, "completed", "success")
	})
}

// TestReconcile: failed deliveries are redelivered, an open pull request
// with no check is checked, the registry catches up with the default
// branch, and the installed repositories are listed.
func TestReconcile(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		ctx := t.Context()
		now := time.Now()
		failed := h.gh.AddDelivery("guid-failed", "pull_request", 502, now.Add(-time.Hour))
		h.gh.AddDelivery("guid-failed", "pull_request", 0, now.Add(-50*time.Minute)) // a retry that timed out
		okID := h.gh.AddDelivery("guid-ok", "pull_request", 202, now.Add(-time.Hour))
		h.gh.AddDelivery("guid-ok", "pull_request", 500, now.Add(-2*time.Hour))
		old := h.gh.AddDelivery("guid-old", "push", 500, now.Add(-100*time.Hour))
		pr := h.openSIPPull("add")
		if err := h.app.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		got := h.gh.Redelivered()
		if len(got) != 1 || got[0] != failed+1 {
			t.Errorf("redelivered %v, want only the latest attempt of guid-failed (%d); not %d (succeeded) nor %d (too old)", got, failed+1, okID, old)
		}
		h.run()
		eventually(t, "the installed repository listed", func() bool {
			repos, err := h.store.Repositories(ctx)
			return err == nil && len(repos) == 1 && repos[0].FullName == "octo-org/sips" && repos[0].DefaultBranch == "main"
		})
		h.waitCheck(h.gh.HeadSHA(pr), bot.ValidationCheck, "completed", "success")
		main := h.gh.Head(h.repo, "main")
		eventually(t, "the registry synced", func() bool {
			st, err := h.store.SyncState(ctx)
			return err == nil && st.CommitSHA == main
		})
	})
}

// TestInstallationEvents keep the list of repositories.
func TestInstallationEvents(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.run()
		ctx := t.Context()
		repo := h.gh.RepoJSON(h.repo)
		removed := fixture(t, "installation_repositories/removed.payload.json")
		removed["installation"] = map[string]any{"id": h.repo.Installation}
		removed["repositories_removed"] = []any{repo}
		removed["repositories_added"] = []any{}
		added := fixture(t, "installation_repositories/added.payload.json")
		added["installation"] = map[string]any{"id": h.repo.Installation}
		added["repositories_added"] = []any{map[string]any{"id": repo["id"], "name": repo["name"], "full_name": repo["full_name"]}}
		added["repositories_removed"] = []any{}

		inst := h.repo.Installation
		h.deliver("installation_repositories", newGUID(), added)
		eventually(t, "the repository added", func() bool {
			rs, err := h.store.Repositories(ctx)
			return err == nil && len(rs) == 1 && rs[0].DefaultBranch == "main"
		})
		// GitHub removes the repository from the installation, then says so
		// (reconciliation, running at start, sees the same state).
		h.gh.SetInstalled(h.repo, 0)
		h.deliver("installation_repositories", newGUID(), removed)
		eventually(t, "the repository removed", func() bool {
			rs, err := h.store.Repositories(ctx)
			return err == nil && len(rs) == 0
		})
		deleted := fixture(t, "installation/deleted.payload.json")
		deleted["installation"].(map[string]any)["id"] = inst
		h.gh.SetInstalled(h.repo, inst)
		h.deliver("installation_repositories", newGUID(), added)
		eventually(t, "the repository added again", func() bool {
			rs, err := h.store.Repositories(ctx)
			return err == nil && len(rs) == 1
		})
		h.gh.SetInstalled(h.repo, 0)
		guid := newGUID()
		h.deliver("installation", guid, deleted)
		// Work queued for the repository before (its sync) may still be
		// retrying against the uninstalled App; the deletion itself is done.
		eventually(t, "the installation removed", func() bool {
			rs, err := h.store.Repositories(ctx)
			d, derr := h.store.Delivery(ctx, guid)
			return err == nil && derr == nil && len(rs) == 0 && d.Status == inbox.Done
		})
	})
}
