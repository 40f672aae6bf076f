package bot_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

func lineOf(content, prefix string) int {
	for i, l := range strings.Split(content, "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	return 0
}

// TestPullRequestLifecycle is the App's whole job, end to end, over real
// HTTP against the fake GitHub, with real git and real webhook payloads:
// a SIP pull request is validated, broken, collides with another, is
// approved (not by its author), goes stale, is approved again and merged,
// and the registry serves the new SIP at the merge commit.
func TestPullRequestLifecycle(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.gh.SetTeam("octo-org/sip-editors", "editor", "active")
		h.gh.SetTeam("octo-org/sip-editors", "invitee", "pending")
		h.run()
		ctx := t.Context()

		// At start, reconciliation syncs the registry to the default branch.
		main0 := h.gh.Head(h.repo, "main")
		eventually(t, "the initial sync", func() bool {
			st, err := h.store.SyncState(ctx)
			return err == nil && st.CommitSHA == main0
		})

		// 1. A pull request adding a valid SIP.
		sip9 := siptest.SIP(9, "identity-nine", "draft")
		h.gh.Push(h.repo, "add-sip-9", map[string]string{sip9.Path: string(sip9.Content)})
		pr := h.gh.OpenPull(h.repo, "add-sip-9", "author")
		if code := h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr)); code != http.StatusAccepted {
			t.Fatalf("opened: status %d", code)
		}
		head1 := h.gh.HeadSHA(pr)
		run := h.waitCheck(head1, bot.ValidationCheck, "completed", "success")
		if !strings.Contains(run.Summary, "add SIP-9 `identity-nine`") {
			t.Errorf("the summary previews no addition:\n%s", run.Summary)
		}
		h.waitCheck(head1, bot.ApprovalCheck, "in_progress", "")
		eventually(t, "the comment", func() bool { return len(h.gh.Comments(h.repo, pr.Number)) == 1 })
		// Labels come after the comment, in the same delivery.
		eventually(t, `the label "new SIP"`, func() bool { return slices.Equal(h.gh.Labels(pr), []string{"new SIP"}) })

		// 2. A push that breaks it: a failure on the exact line, and the
		// same comment edited.
		broken := siptest.Set(sip9, "status: ", "status: bogus")
		h.gh.Push(h.repo, "add-sip-9", map[string]string{sip9.Path: string(broken.Content)})
		h.deliver("pull_request", newGUID(), h.pullEvent("synchronize", pr))
		head2 := h.gh.HeadSHA(pr)
		run = h.waitCheck(head2, bot.ValidationCheck, "completed", "failure")
		wantLine := float64(lineOf(string(broken.Content), "status: "))
		found := false
		for _, a := range run.Annotations {
			if a["path"] == sip9.Path && a["start_line"] == wantLine && a["annotation_level"] == "failure" {
				found = true
			}
		}
		if !found {
			t.Errorf("no failure annotation on %s:%v: %v", sip9.Path, wantLine, run.Annotations)
		}
		eventually(t, "the comment edited", func() bool {
			cs := h.gh.Comments(h.repo, pr.Number)
			return len(cs) == 1 && cs[0].Edits >= 1 && strings.Contains(cs[0].Body, "SIP validation: 1 error")
		})

		// 3. A second pull request claiming the same number: the first,
		// opened earlier, keeps it; the second is told so.
		other := siptest.SIP(9, "another-nine", "draft")
		h.gh.Push(h.repo, "other-9", map[string]string{other.Path: string(other.Content)})
		pr2 := h.gh.OpenPull(h.repo, "other-9", "someone")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr2))
		hasRule := func(run *githubtest.CheckRun, rule string) bool {
			for _, a := range run.Annotations {
				if a["title"] == rule {
					return true
				}
			}
			return false
		}
		run2 := h.waitCheck(h.gh.HeadSHA(pr2), bot.ValidationCheck, "completed", "failure")
		if !hasRule(run2, "number-collision") || !strings.Contains(fmt.Sprint(run2.Annotations), fmt.Sprintf("pull request #%d, opened earlier", pr.Number)) {
			t.Errorf("the second pull request does not report the first's claim: %v", run2.Annotations)
		}
		if r := h.latest(head2, bot.ValidationCheck); r == nil || hasRule(r, "number-collision") {
			t.Errorf("the first pull request, which keeps the number, reports a collision: %+v", r)
		}

		// Fix the first: it passes while the second is still open.
		h.gh.Push(h.repo, "add-sip-9", map[string]string{sip9.Path: string(sip9.Content) + "\nMore detail.\n"})
		h.deliver("pull_request", newGUID(), h.pullEvent("synchronize", pr))
		head3 := h.gh.HeadSHA(pr)
		h.waitCheck(head3, bot.ValidationCheck, "completed", "success")
		closePull(h, pr2)

		// 4. Approvals: the author's own does not count, nor a pending
		// team member's; a maintainer's does.
		h.gh.AddReview(pr, "author", "APPROVED")
		h.deliver("pull_request_review", newGUID(), h.reviewEvent(pr, "author", "approved"))
		h.gh.AddReview(pr, "invitee", "APPROVED")
		h.deliver("pull_request_review", newGUID(), h.reviewEvent(pr, "invitee", "approved"))
		eventually(t, "the author's approval ignored", func() bool {
			r := h.latest(head3, bot.ApprovalCheck)
			return r != nil && r.Status == "in_progress" && strings.Contains(r.Summary, "@author: the pull request's author's own review does not count") &&
				strings.Contains(r.Summary, "@invitee: not among those who may approve (maintainers)")
		})
		h.gh.AddReview(pr, "editor", "APPROVED")
		h.deliver("pull_request_review", newGUID(), h.reviewEvent(pr, "editor", "approved"))
		h.waitCheck(head3, bot.ApprovalCheck, "completed", "success")

		// 5. A push to a SIP file makes the approval stale.
		h.gh.Push(h.repo, "add-sip-9", map[string]string{sip9.Path: string(sip9.Content) + "\nEven more detail.\n"})
		h.deliver("pull_request", newGUID(), h.pullEvent("synchronize", pr))
		head4 := h.gh.HeadSHA(pr)
		r := h.waitCheck(head4, bot.ApprovalCheck, "in_progress", "")
		if !strings.Contains(r.Summary, "@editor: approved before the latest change to a SIP or governance file") {
			t.Errorf("stale approval not explained:\n%s", r.Summary)
		}
		// A maintainer's request for changes blocks; their approval clears it.
		h.gh.AddReview(pr, "maintainer", "CHANGES_REQUESTED")
		h.deliver("pull_request_review", newGUID(), h.reviewEvent(pr, "maintainer", "changes_requested"))
		h.waitCheck(head4, bot.ApprovalCheck, "completed", "failure")
		h.gh.AddReview(pr, "maintainer", "APPROVED")
		h.deliver("pull_request_review", newGUID(), h.reviewEvent(pr, "maintainer", "approved"))
		h.waitCheck(head4, bot.ApprovalCheck, "completed", "success")
		if n := len(h.gh.Comments(h.repo, pr.Number)); n != 1 {
			t.Errorf("%d comments on the pull request, want 1 kept up to date", n)
		}

		// 6. Merge: the push to main syncs the registry to the merge commit.
		before := h.gh.Head(h.repo, "main")
		merge := h.gh.Merge(h.repo, pr)
		h.deliver("push", newGUID(), h.pushEvent("main", before, merge))
		var entry *registry.Entry
		eventually(t, "SIP-9 in the registry", func() bool {
			e, err := h.store.EntryByNumber(ctx, 9)
			entry = e
			return err == nil
		})
		versions, err := h.store.Versions(ctx, entry.ID)
		if err != nil || len(versions) != 1 || versions[0].CommitSHA != merge {
			t.Fatalf("versions = %+v, %v; want one at the merge commit %s", versions, err, merge)
		}
		if entry.ID != "identity-nine" {
			t.Errorf("entry = %s", entry.ID)
		}
	})
}

func closePull(h *harness, p *githubtest.Pull) {
	h.t.Helper()
	h.gh.Close(h.repo, p)
	h.deliver("pull_request", newGUID(), h.pullEvent("closed", p))
}

// TestApprovalCannotBeBypassedThroughASubfolder: after an approval, a push
// that adds or edits a Markdown file in a subfolder of evaluations/ makes
// the approval stale and fails validation (file-location), so it can
// neither merge unreviewed nor reach the registry.
func TestApprovalCannotBeBypassedThroughASubfolder(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.gh.SetTeam("octo-org/sip-editors", "editor", "active")
		h.run()
		sip12 := siptest.SIP(12, "twelve", "draft")
		h.gh.Push(h.repo, "add-sip-12", map[string]string{sip12.Path: string(sip12.Content)})
		pr := h.gh.OpenPull(h.repo, "add-sip-12", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		head := h.gh.HeadSHA(pr)
		h.waitCheck(head, bot.ValidationCheck, "completed", "success")
		h.gh.AddReview(pr, "editor", "APPROVED")
		h.deliver("pull_request_review", newGUID(), h.reviewEvent(pr, "editor", "approved"))
		h.waitCheck(head, bot.ApprovalCheck, "completed", "success")

		hidden := siptest.SIP(13, "hidden-thirteen", "active")
		h.gh.Push(h.repo, "add-sip-12", map[string]string{"evaluations/extra/SIP-13.md": string(hidden.Content)})
		h.deliver("pull_request", newGUID(), h.pullEvent("synchronize", pr))
		head = h.gh.HeadSHA(pr)
		run := h.waitCheck(head, bot.ValidationCheck, "completed", "failure")
		found := false
		for _, a := range run.Annotations {
			if a["path"] == "evaluations/extra/SIP-13.md" && a["title"] == "file-location" {
				found = true
			}
		}
		if !found {
			t.Errorf("no file-location annotation on the subfolder file: %v", run.Annotations)
		}
		r := h.waitCheck(head, bot.ApprovalCheck, "in_progress", "")
		if !strings.Contains(r.Summary, "@editor: approved before the latest change to a SIP or governance file") {
			t.Errorf("the approval did not go stale:\n%s", r.Summary)
		}
	})
}
