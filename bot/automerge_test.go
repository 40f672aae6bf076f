package bot_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry/siptest"
)

// TestAutoMergeOfSafeEdits: with auto_merge, an author of a draft editing
// only that draft is merged by the App once its checks are green, the
// merge recorded; the merge is verified on main and synced. Someone else's
// edit of the draft, or its author activating it, is not.
func TestAutoMergeOfSafeEdits(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.gh.AddUsers("ada", "eve")
		draft := siptest.Set(siptest.SIP(12, "twelve", "draft"), "author: ", "author: Ada Lovelace (@ada)")
		main0 := h.gh.Push(h.repo, "main", map[string]string{policy.Path: "maintainers:\n  users: [maintainer]\nauto_merge: true\n", draft.Path: string(draft.Content)})
		h.run()
		h.waitCheck(main0, bot.SyncCheck, "completed", "success")

		openPull := func(branch, author string, f string) *githubtest.Pull {
			h.gh.Push(h.repo, branch, map[string]string{draft.Path: f})
			pr := h.gh.OpenPull(h.repo, branch, author)
			h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
			return pr
		}
		edit := siptest.Edit(draft, "1.0.1", "2026-02-01", "A clarification by its author.")
		mine := openPull("ada-edit", "ada", string(edit.Content))
		eventually(t, "the safe edit merged by the App", func() bool {
			for _, c := range h.gh.Comments(h.repo, mine.Number) {
				if strings.Contains(c.Body, "Merged by the App") && strings.Contains(c.Body, "@ada, an author of SIP-12") {
					return true
				}
			}
			return false
		})
		merged := h.gh.Head(h.repo, "main")
		if merged == main0 {
			t.Fatalf("main did not move: the pull request is not merged")
		}
		h.deliver("push", newGUID(), h.pushEvent("main", main0, merged))
		h.waitCheck(merged, bot.VerifyCheck, "completed", "success")
		h.waitCheck(merged, bot.SyncCheck, "completed", "success")
		if m := h.metrics(); !strings.Contains(m, "sip_github_auto_merges_total 1") {
			t.Errorf("the merge is not counted")
		}

		// Not safe: another person's edit; the author activating it.
		again := siptest.Edit(edit, "1.0.2", "2026-02-02", "Another clarification.")
		theirs := openPull("eve-edit", "eve", string(again.Content))
		h.waitCheck(h.gh.HeadSHA(theirs), bot.ApprovalCheck, "in_progress", "")
		active := siptest.Set(siptest.Edit(edit, "1.1.0", "2026-02-03", "Ready."), "status: ", "status: active")
		activate := openPull("ada-activate", "ada", string(active.Content))
		h.waitCheck(h.gh.HeadSHA(activate), bot.ApprovalCheck, "in_progress", "")
		for _, p := range []*githubtest.Pull{theirs, activate} {
			if h.gh.Head(h.repo, "main") != merged {
				t.Errorf("#%d was merged", p.Number)
			}
		}
	})
}
