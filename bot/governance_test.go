package bot_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry/siptest"
)

// TestPolicyGovernsItself: a pull request that edits or deletes the
// policy file needs an admin's approval (by default the repository's
// admins); a maintainer's is not enough, and a policy that would not
// parse fails validation before it can merge.
func TestPolicyGovernsItself(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.gh.SetTeam("octo-org/sip-editors", "editor", "active")
		h.gh.SetRole("owner", "admin")
		h.gh.SetRole("editor", "maintain")
		h.run()

		// Editing the policy: a maintainer cannot approve it alone.
		h.gh.Push(h.repo, "loosen", map[string]string{policy.Path: "maintainers:\n  users: [author]\nrequired_approvals: 1\n"})
		pr := h.gh.OpenPull(h.repo, "loosen", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		head := h.gh.HeadSHA(pr)
		h.waitCheck(head, bot.ValidationCheck, "completed", "success")
		r := h.waitCheck(head, bot.ApprovalCheck, "in_progress", "")
		if r.Title != "Waiting for 1 approval from admins (.github/sip.yml)" {
			t.Errorf("approval title %q", r.Title)
		}
		h.gh.AddReview(pr, "editor", "APPROVED")
		h.deliver("pull_request_review", newGUID(), h.reviewEvent(pr, "editor", "approved"))
		eventually(t, "the maintainer's approval not counted", func() bool {
			r := h.latest(head, bot.ApprovalCheck)
			return r != nil && r.Status == "in_progress" && strings.Contains(r.Summary, "@editor: not among those who may approve (admins)")
		})
		h.gh.AddReview(pr, "owner", "APPROVED")
		h.deliver("pull_request_review", newGUID(), h.reviewEvent(pr, "owner", "approved"))
		h.waitCheck(head, bot.ApprovalCheck, "completed", "success")

		// Deleting the policy is a change to it too.
		h.gh.Push(h.repo, "drop-policy", map[string]string{policy.Path: ""})
		drop := h.gh.OpenPull(h.repo, "drop-policy", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", drop))
		h.waitCheck(h.gh.HeadSHA(drop), bot.ApprovalCheck, "in_progress", "")

		// A policy that would not parse fails validation.
		h.gh.Push(h.repo, "typo", map[string]string{policy.Path: "maintainer:\n  users: [author]\n"})
		typo := h.gh.OpenPull(h.repo, "typo", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", typo))
		v := h.waitCheck(h.gh.HeadSHA(typo), bot.ValidationCheck, "completed", "failure")
		if v.Title != "Invalid approval policy" || !strings.Contains(v.Summary, "field maintainer not found") {
			t.Errorf("validation of a broken policy: %q\n%s", v.Title, v.Summary)
		}
	})
}

// TestBrokenPolicyOnMainFailsClosed: a policy on the default branch that
// cannot be read fails the approval check of every SIP pull request, and
// says why.
func TestBrokenPolicyOnMainFailsClosed(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.gh.Push(h.repo, "main", map[string]string{policy.Path: "maintainers:\n  users: [ada]\nrequired_aprovals: 0\n"})
		h.run()
		sip12 := siptest.SIP(12, "twelve", "draft")
		h.gh.Push(h.repo, "add-12", map[string]string{sip12.Path: string(sip12.Content)})
		pr := h.gh.OpenPull(h.repo, "add-12", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		r := h.waitCheck(h.gh.HeadSHA(pr), bot.ApprovalCheck, "completed", "failure")
		if r.Title != "Invalid approval policy" || !strings.Contains(r.Summary, "required_aprovals") {
			t.Errorf("approval on a broken policy: %q\n%s", r.Title, r.Summary)
		}
	})
}

// TestFirstComeKeepsTheNumber: of two open pull requests claiming SIP-12,
// the earlier stays green and the later fails naming the next free
// number; when the earlier closes, the later passes without a push.
func TestFirstComeKeepsTheNumber(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.run()
		a, b := siptest.SIP(12, "first-twelve", "draft"), siptest.SIP(12, "second-twelve", "draft")
		h.gh.Push(h.repo, "first", map[string]string{a.Path: string(a.Content)})
		h.gh.Push(h.repo, "second", map[string]string{b.Path: string(b.Content)})
		pa, pb := h.gh.OpenPull(h.repo, "first", "ann"), h.gh.OpenPull(h.repo, "second", "bob")
		// Opened together: the deliveries race, the earlier number wins.
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pb))
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pa))
		headA, headB := h.gh.HeadSHA(pa), h.gh.HeadSHA(pb)
		h.waitCheck(headA, bot.ValidationCheck, "completed", "success")
		run := h.waitCheck(headB, bot.ValidationCheck, "completed", "failure")
		text := fmt.Sprint(run.Annotations)
		if !strings.Contains(text, "already claimed by pull request #"+fmt.Sprint(pa.Number)) || !strings.Contains(text, "Take 13") {
			t.Errorf("the later pull request's annotations: %s", text)
		}
		closePull(h, pa)
		h.waitCheck(headB, bot.ValidationCheck, "completed", "success")
	})
}
