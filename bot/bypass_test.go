package bot_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry/siptest"
)

// modulesPolicy gives module safety an owner, lets owners activate and
// reserves deprecation to admins.
const modulesPolicy = `maintainers:
  users: [maintainer]
admins:
  users: [admin]
modules:
  safety:
    owners: {users: [sam]}
transitions:
  - {from: draft, to: active, by: owners}
  - {to: deprecated, by: admins}
`

// governedRepo is a harness whose main holds modulesPolicy and SIP-12
// (core, with status), synced before the test acts.
func governedRepo(t *testing.T, open func(t *testing.T) bot.Store, status string) (*harness, string) {
	h := newHarness(t, open(t))
	h.gh.AddUsers("sam", "admin", "author")
	sip12 := siptest.SIP(12, "twelve", status)
	main := h.gh.Push(h.repo, "main", map[string]string{policy.Path: modulesPolicy, sip12.Path: string(sip12.Content)})
	h.run()
	h.waitCheck(main, bot.SyncCheck, "completed", "success")
	return h, main
}

// approveBy records an approval and tells the App.
func (h *harness) approveBy(pr *githubtest.Pull, user string) {
	h.gh.AddReview(pr, user, "APPROVED")
	h.deliver("pull_request_review", newGUID(), h.reviewEvent(pr, user, "approved"))
}

// TestMoveAndActivateNeedsEachPart: a pull request that moves a draft from
// core into safety and activates it is not approved by safety's owner
// alone, although the activation rule names the module's owners: moving
// the SIP out of core needs core's say (its maintainers) too.
func TestMoveAndActivateNeedsEachPart(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h, _ := governedRepo(t, open, "draft")
		moved := siptest.Set(siptest.Set(siptest.SIP(12, "twelve", "draft"), "module: ", "module: safety"), "status: ", "status: active")
		h.gh.Push(h.repo, "take-over", map[string]string{moved.Path: string(moved.Content)})
		pr := h.gh.OpenPull(h.repo, "take-over", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		head := h.gh.HeadSHA(pr)
		h.waitCheck(head, bot.ApprovalCheck, "in_progress", "")

		h.approveBy(pr, "sam")
		eventually(t, "safety's owner approved, core's say missing", func() bool {
			r := h.latest(head, bot.ApprovalCheck)
			return r != nil && r.Status == "in_progress" && strings.Contains(r.Summary, "@sam") &&
				strings.Contains(r.Title, "maintainers (SIP-12)")
		})
		r := h.latest(head, bot.ApprovalCheck)
		for _, want := range []string{"status draft → active", "a SIP moved out of module core (to safety)", "a SIP moved into module safety (from core)"} {
			if !strings.Contains(r.Summary, want) {
				t.Errorf("the approval check does not list %q:\n%s", want, r.Summary)
			}
		}
		h.approveBy(pr, "maintainer")
		h.waitCheck(head, bot.ApprovalCheck, "completed", "success")
	})
}

// TestDeletingIsDeprecating: the registry deprecates a SIP whose file is
// deleted, so deleting an active SIP needs what deprecating it needs (an
// admin here), not one maintainer; a draft likewise.
func TestDeletingIsDeprecating(t *testing.T) {
	for _, status := range []string{"active", "draft"} {
		t.Run(status, func(t *testing.T) {
			stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
				h, _ := governedRepo(t, open, status)
				h.gh.Push(h.repo, "delete-12", map[string]string{"evaluations/SIP-12.md": ""})
				pr := h.gh.OpenPull(h.repo, "delete-12", "author")
				h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
				head := h.gh.HeadSHA(pr)
				h.approveBy(pr, "maintainer")
				eventually(t, "a maintainer's approval is not enough", func() bool {
					r := h.latest(head, bot.ApprovalCheck)
					return r != nil && r.Status == "in_progress" && strings.Contains(r.Summary, "@maintainer") &&
						strings.Contains(r.Title, "admins (SIP-12)")
				})
				if r := h.latest(head, bot.ApprovalCheck); !strings.Contains(r.Summary, "status "+status+" → deprecated") {
					t.Errorf("the approval check does not name the deprecation:\n%s", r.Summary)
				}
				h.approveBy(pr, "admin")
				h.waitCheck(head, bot.ApprovalCheck, "completed", "success")
			})
		})
	}
}

// overrideMain has an admin override the refused commit on main through
// the App's issue, as a person would to let it through.
func (h *harness) overrideMain(commit string) {
	h.t.Helper()
	h.waitCheck(commit, bot.VerifyCheck, "completed", "failure")
	is := h.verificationIssue()
	eventually(h.t, "the issue names "+short(commit), func() bool {
		for _, i := range h.gh.Issues(h.repo) {
			if i.Number == is.Number {
				return strings.Contains(i.Body, short(commit))
			}
		}
		return false
	})
	c, _ := h.say(is.Number, false, "admin", "/sip override merged past its check on purpose")
	if r := h.replyTo(is.Number, c); !strings.Contains(r, "Override recorded") {
		h.t.Fatalf("the override was not recorded: %s", r)
	}
}

// TestSyncAppliesTrustedIssuers: a SIP whose credential prerequisite names
// an issuer the policy does not trust, let onto main past its failing
// check (here by an admin's override of the refused commit), is refused by
// the registry's sync too, which keeps serving the commit before; with
// the issuer trusted, the same SIP syncs. An override lets a commit past
// the approval policy, never past validation.
func TestSyncAppliesTrustedIssuers(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h, main0 := governedRepo(t, open, "draft")
		ctx := t.Context()
		cred := `{credential: {issuer: "did:web:evil.example", achievement: "https://evil.example/evaluations/x"}}`
		sip13 := siptest.SIP(13, "thirteen", "draft", cred)
		bad := h.gh.Push(h.repo, "main", map[string]string{sip13.Path: string(sip13.Content)})
		h.deliver("push", newGUID(), h.pushEvent("main", main0, bad))
		h.overrideMain(bad)
		run := h.waitCheck(bad, bot.SyncCheck, "completed", "failure")
		found := false
		for _, an := range run.Annotations {
			found = found || an["title"] == "credential-issuer-untrusted"
		}
		if !found {
			t.Errorf("the refused sync has no credential-issuer-untrusted annotation: %v", run.Annotations)
		}
		if st, _ := h.store.SyncState(ctx); st.CommitSHA != main0 {
			t.Errorf("the registry serves %s, want %s", st.CommitSHA, main0)
		}
		trusted := h.gh.Push(h.repo, "main", map[string]string{policy.Path: modulesPolicy + "trusted_issuers: [did:web:evil.example]\n"})
		h.deliver("push", newGUID(), h.pushEvent("main", bad, trusted))
		h.overrideMain(trusted)
		h.waitCheck(trusted, bot.SyncCheck, "completed", "success")
	})
}

// TestSyncRefusesAnUnreadablePolicy: a policy on main that cannot be read
// is not a policy the registry can apply; the commit is not synced, even
// when an override let it past the approval policy.
func TestSyncRefusesAnUnreadablePolicy(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h, main0 := governedRepo(t, open, "draft")
		broken := h.gh.Push(h.repo, "main", map[string]string{policy.Path: "rules: {no-such-rule: off}\n"})
		h.deliver("push", newGUID(), h.pushEvent("main", main0, broken))
		h.overrideMain(broken)
		run := h.waitCheck(broken, bot.SyncCheck, "completed", "failure")
		if !strings.Contains(run.Summary, "no-such-rule") {
			t.Errorf("the refusal does not say why:\n%s", run.Summary)
		}
		if st, _ := h.store.SyncState(t.Context()); st.CommitSHA != main0 {
			t.Errorf("the registry serves %s, want %s", st.CommitSHA, main0)
		}
	})
}
