package bot_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/registry/siptest"
)

// mergeGroupEvent is a merge_group delivery for a group of the fake.
func (h *harness) mergeGroupEvent(head, base, ref string) map[string]any {
	return map[string]any{"action": "checks_requested",
		"merge_group": map[string]any{"head_sha": head, "head_ref": ref, "base_sha": base, "base_ref": "refs/heads/main",
			"head_commit": map[string]any{"id": head, "message": "Merge"}},
		"repository": h.gh.RepoJSON(h.repo), "installation": map[string]any{"id": h.repo.Installation}}
}

// TestMergeQueue: a merge group is checked as the queue's ref would merge,
// with the same checks and policy: an approved pull request's group
// passes both; one without approvals fails the approval; a group whose
// base moved (a commit on main it does not contain) is stale and fails.
func TestMergeQueue(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h, _ := governedRepo(t, open, "draft")
		add := func(n int, branch string) *githubtest.Pull {
			f := siptest.SIP(n, "sip-"+branch, "draft")
			h.gh.Push(h.repo, branch, map[string]string{f.Path: string(f.Content)})
			pr := h.gh.OpenPull(h.repo, branch, "author")
			h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
			h.waitCheck(h.gh.HeadSHA(pr), bot.ValidationCheck, "completed", "success")
			return pr
		}
		approved, unapproved := add(13, "thirteen"), add(14, "fourteen")
		h.approveBy(approved, "maintainer")
		h.waitCheck(h.gh.HeadSHA(approved), bot.ApprovalCheck, "completed", "success")

		head, base, ref := h.gh.MergeGroup(h.repo, approved)
		h.deliver("merge_group", newGUID(), h.mergeGroupEvent(head, base, ref))
		v := h.waitCheck(head, bot.ValidationCheck, "completed", "success")
		if !strings.Contains(v.Summary, "Merge group of #"+itoa(int64(approved.Number))) {
			t.Errorf("validation of the group:\n%s", v.Summary)
		}
		h.waitCheck(head, bot.ApprovalCheck, "completed", "success")

		head2, base2, ref2 := h.gh.MergeGroup(h.repo, unapproved)
		h.deliver("merge_group", newGUID(), h.mergeGroupEvent(head2, base2, ref2))
		r := h.waitCheck(head2, bot.ApprovalCheck, "completed", "failure")
		if !strings.Contains(r.Title, "Waiting for 1 approval from maintainers") {
			t.Errorf("the unapproved group: %q", r.Title)
		}

		// main moves under a queued group: the group is stale.
		head3, base3, ref3 := h.gh.MergeGroup(h.repo, approved)
		note := siptest.SIP(15, "fifteen", "draft")
		h.gh.Push(h.repo, "main", map[string]string{note.Path: string(note.Content)})
		h.deliver("merge_group", newGUID(), h.mergeGroupEvent(head3, base3, ref3))
		r = h.waitCheck(head3, bot.ValidationCheck, "completed", "failure")
		if !strings.HasPrefix(r.Title, "Stale merge group") {
			t.Errorf("a stale group: %q", r.Title)
		}
	})
}
