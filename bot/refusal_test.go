package bot_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry/siptest"
)

// TestRefusedSyncIsVisibleOnGitHub: two pull requests each add a SIP with
// the same id; after both merge (the second past its checks, let through
// by an admin's override), main holds SIPs the registry refuses.
// The merge commit gets a failing sync check with annotations, the pull
// request that merged last gets one comment (not two, when the push is
// delivered again), and the registry keeps serving the commit before.
func TestRefusedSyncIsVisibleOnGitHub(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.gh.SetRole("admin", "admin")
		h.run()
		ctx := t.Context()
		main0 := h.gh.Head(h.repo, "main")
		eventually(t, "the initial sync", func() bool {
			st, err := h.store.SyncState(ctx)
			return err == nil && st.CommitSHA == main0
		})
		h.waitCheck(main0, bot.SyncCheck, "completed", "success")

		a, b := siptest.SIP(12, "same-id", "draft"), siptest.SIP(13, "same-id", "draft")
		h.gh.Push(h.repo, "add-a", map[string]string{a.Path: string(a.Content)})
		h.gh.Push(h.repo, "add-b", map[string]string{b.Path: string(b.Content)})
		pa, pb := h.gh.OpenPull(h.repo, "add-a", "ann"), h.gh.OpenPull(h.repo, "add-b", "bob")

		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pa))
		h.waitCheck(h.gh.HeadSHA(pa), bot.ValidationCheck, "completed", "success")
		h.approveBy(pa, "maintainer")
		h.waitCheck(h.gh.HeadSHA(pa), bot.ApprovalCheck, "completed", "success")
		before := h.gh.Head(h.repo, "main")
		first := h.gh.Merge(h.repo, pa)
		h.deliver("push", newGUID(), h.pushEvent("main", before, first))
		h.waitCheck(first, bot.SyncCheck, "completed", "success")
		second := h.gh.Merge(h.repo, pb)
		push := h.pushEvent("main", first, second)
		h.deliver("push", newGUID(), push)
		h.overrideMain(second)
		run := h.waitCheck(second, bot.SyncCheck, "completed", "failure")
		found := false
		for _, an := range run.Annotations {
			found = found || an["title"] == "id-duplicate"
		}
		if !found || !strings.Contains(run.Title, "refused") {
			t.Errorf("sync check %q without an id-duplicate annotation: %v", run.Title, run.Annotations)
		}
		refusals := func(n int) int {
			count := 0
			for _, c := range h.gh.Comments(h.repo, n) {
				if strings.Contains(c.Body, "The registry refused `main`") {
					count++
				}
			}
			return count
		}
		eventually(t, "the comment on the pull request that broke main", func() bool { return refusals(pb.Number) == 1 })
		again := newGUID()
		h.deliver("push", again, push) // delivered again: no second comment
		eventually(t, "the redelivered push processed", func() bool {
			d, err := h.store.Delivery(ctx, again)
			return err == nil && (d.Status == inbox.Done || d.Status == inbox.Dead)
		})
		if st, _ := h.store.SyncState(ctx); st.CommitSHA != first {
			t.Errorf("the registry serves %s, want the last good commit %s", st.CommitSHA, first)
		}
		body := h.metrics()
		if !strings.Contains(body, "sip_registry_sync_refused 1") {
			t.Errorf("metrics do not show the refusal:\n%s", body)
		}
		if n := refusals(pb.Number); n != 1 {
			t.Errorf("%d refusal comments after a redelivery, want 1", n)
		}
		if n := refusals(pa.Number); n != 0 {
			t.Errorf("%d refusal comments on the pull request that merged cleanly, want 0", n)
		}
	})
}
