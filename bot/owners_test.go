package bot_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

// ownedPolicy has module owners, author approvals, a two-maintainer rule
// for activation, and keeps approvals across merges of main.
const ownedPolicy = `maintainers:
  teams: [octo-org/sip-editors]
modules:
  safety:
    owners: {users: [sam]}
authors_approve: true
transitions:
  - {from: draft, to: active, approvals: 2, by: maintainers}
ignore_update_merges: true
`

// safetySIP is SIP-12 of module safety, written by @jim and @joshua.
func safetySIP(status string) registry.File {
	f := siptest.SIP(12, "twelve", status)
	f = siptest.Set(f, "module: ", "module: safety")
	return siptest.Set(f, "author: ", "author: Jim Cowrie (@jim), Joshua Tan (@joshua)")
}

// TestPolicyOwnersAuthorsAndActivation: a repository with module owners,
// author approvals and a two-maintainer rule for activation, end to end
// against the fake GitHub: an author approves an edit that keeps the
// status, but neither an author nor a module owner can activate; two
// maintainers can; merging main into the pull request keeps approvals,
// a new change to the SIP does not.
func TestPolicyOwnersAuthorsAndActivation(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		for _, u := range []string{"mia", "max"} {
			h.gh.SetTeam("octo-org/sip-editors", u, "active")
		}
		h.gh.AddUsers("sam", "jim", "joshua")
		draft := safetySIP("draft")
		h.gh.Push(h.repo, "main", map[string]string{policy.Path: ownedPolicy, draft.Path: string(draft.Content)})
		h.run()

		// An edit that keeps the status: an author of the SIP approves it.
		edit := siptest.Edit(draft, "1.0.1", "2026-02-01", "A clarification.")
		h.gh.Push(h.repo, "clarify", map[string]string{edit.Path: string(edit.Content)})
		pr := h.gh.OpenPull(h.repo, "clarify", "contributor")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		head := h.gh.HeadSHA(pr)
		r := h.waitCheck(head, bot.ApprovalCheck, "in_progress", "")
		for _, want := range []string{"authors of SIP-12: @jim, @joshua", "owners of module safety: @sam", "maintainers: @octo-org/sip-editors"} {
			if !strings.Contains(r.Summary, want) {
				t.Errorf("the summary does not say %q:\n%s", want, r.Summary)
			}
		}
		h.gh.AddReview(pr, "joshua", "APPROVED")
		h.deliver("pull_request_review", newGUID(), h.reviewEvent(pr, "joshua", "approved"))
		h.waitCheck(head, bot.ApprovalCheck, "completed", "success")

		// Main moves (another SIP changes) and the branch is updated: the
		// approval stands, because what the pull request changes did not.
		other := siptest.SIP(13, "thirteen", "draft")
		h.gh.Push(h.repo, "main", map[string]string{other.Path: string(other.Content)})
		head = h.gh.UpdateBranch(h.repo, pr)
		h.deliver("pull_request", newGUID(), h.pullEvent("synchronize", pr))
		h.waitCheck(head, bot.ApprovalCheck, "completed", "success")

		// The contributor then changes the SIP again: the approval is stale.
		again := siptest.Edit(draft, "1.0.1", "2026-02-01", "A different clarification.")
		head = h.gh.Push(h.repo, "clarify", map[string]string{again.Path: string(again.Content)})
		h.deliver("pull_request", newGUID(), h.pullEvent("synchronize", pr))
		r = h.waitCheck(head, bot.ApprovalCheck, "in_progress", "")
		if !strings.Contains(r.Summary, "@joshua: "+policy.StaleReason) {
			t.Errorf("a changed SIP keeps its author's approval:\n%s", r.Summary)
		}

		// Activation: the authors and the module owner do not count; two
		// maintainers do.
		active := siptest.Set(siptest.Edit(draft, "1.1.0", "2026-03-01", "Ready."), "status: ", "status: active")
		h.gh.Push(h.repo, "activate", map[string]string{active.Path: string(active.Content)})
		act := h.gh.OpenPull(h.repo, "activate", "contributor")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", act))
		head = h.gh.HeadSHA(act)
		h.waitCheck(head, bot.ValidationCheck, "completed", "success")
		for _, u := range []string{"jim", "sam", "mia"} {
			h.gh.AddReview(act, u, "APPROVED")
			h.deliver("pull_request_review", newGUID(), h.reviewEvent(act, u, "approved"))
		}
		eventually(t, "one of two maintainers counted, the author and the owner not", func() bool {
			r := h.latest(head, bot.ApprovalCheck)
			return r != nil && r.Status == "in_progress" && strings.Contains(r.Summary, "| 1 of 2 |") &&
				strings.Contains(r.Summary, "@jim: not among those who may approve (maintainers)") &&
				strings.Contains(r.Summary, "@sam: not among those who may approve (maintainers)")
		})
		if r := h.latest(head, bot.ApprovalCheck); !strings.Contains(r.Summary, "status draft → active") {
			t.Errorf("the summary does not name the transition rule:\n%s", r.Summary)
		}
		h.gh.AddReview(act, "max", "APPROVED")
		h.deliver("pull_request_review", newGUID(), h.reviewEvent(act, "max", "approved"))
		h.waitCheck(head, bot.ApprovalCheck, "completed", "success")
	})
}

// TestPolicyNamesPeopleWhoExist: a policy that names a team or a user
// GitHub does not have fails the check of the pull request that proposes
// it, at its line; a team on main that no longer exists fails every
// approval closed; an author @handle that is not a user fails validation
// at the author line.
func TestPolicyNamesPeopleWhoExist(t *testing.T) {
	h := newHarness(t, openSQLite(t))
	h.gh.SetRole("owner", "admin")
	h.run()

	h.gh.Push(h.repo, "ghosts", map[string]string{policy.Path: "maintainers:\n  users: [maintainer, ghost-user]\n  teams: [octo-org/ghosts]\n"})
	pr := h.gh.OpenPull(h.repo, "ghosts", "author")
	h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
	v := h.waitCheck(h.gh.HeadSHA(pr), bot.ValidationCheck, "completed", "failure")
	for _, want := range []string{".github/sip.yml:2: user @ghost-user is not a GitHub user", ".github/sip.yml:3: team @octo-org/ghosts does not exist"} {
		if !strings.Contains(v.Summary, want) {
			t.Errorf("validation does not say %q:\n%s", want, v.Summary)
		}
	}

	handle := siptest.Set(siptest.SIP(14, "fourteen", "draft"), "author: ", "author: Ada (@ada), Casper (@casper-the-ghost)")
	h.gh.AddUsers("ada")
	h.gh.Push(h.repo, "ghost-author", map[string]string{handle.Path: string(handle.Content)})
	sp := h.gh.OpenPull(h.repo, "ghost-author", "author")
	h.deliver("pull_request", newGUID(), h.pullEvent("opened", sp))
	v = h.waitCheck(h.gh.HeadSHA(sp), bot.ValidationCheck, "completed", "failure")
	if !strings.Contains(v.Summary, "author-unknown") || !strings.Contains(v.Summary, "@casper-the-ghost") || strings.Contains(v.Summary, "@ada is") {
		t.Errorf("validation of an unknown author handle:\n%s", v.Summary)
	}
	if a := v.Annotations; len(a) == 0 || a[0]["start_line"] != float64(8) {
		t.Errorf("annotation %v, want it at the author line (8)", a)
	}

	// The team main's policy names is deleted: approvals fail closed.
	before := h.gh.Head(h.repo, "main")
	gone := h.gh.Push(h.repo, "main", map[string]string{policy.Path: "maintainers:\n  teams: [octo-org/gone]\n"})
	h.gh.SetRole("admin", "admin")
	h.deliver("push", newGUID(), h.pushEvent("main", before, gone))
	h.overrideMain(gone) // pushed straight to main: in force once let through
	h.waitCheck(gone, bot.SyncCheck, "completed", "success")
	sip15 := siptest.SIP(15, "fifteen", "draft")
	h.gh.Push(h.repo, "add-15", map[string]string{sip15.Path: string(sip15.Content)})
	p15 := h.gh.OpenPull(h.repo, "add-15", "author")
	h.deliver("pull_request", newGUID(), h.pullEvent("opened", p15))
	r := h.waitCheck(h.gh.HeadSHA(p15), bot.ApprovalCheck, "completed", "failure")
	if r.Title != "Invalid approval policy" || !strings.Contains(r.Summary, "team @octo-org/gone does not exist") {
		t.Errorf("approval under a policy naming a missing team: %q\n%s", r.Title, r.Summary)
	}
}
