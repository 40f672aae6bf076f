package bot_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry/siptest"
)

const agentPolicy = modulesPolicy + `agents:
  accounts: [devin-ai]
  sponsors: {users: [sam]}
first_time_open_pulls: 1
`

// TestAgentPullRequests: an agent's pull request is blocked without a
// disclosure, and needs its human sponsor's approval besides a
// maintainer's; an agent's approval of another pull request never
// counts. The check run and `sip policy explain` say so.
func TestAgentPullRequests(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h, main0 := governedRepo(t, open, "draft")
		h.gh.AddUsers("devin-ai")
		withAgents := h.gh.Push(h.repo, "main", map[string]string{policy.Path: agentPolicy})
		h.deliver("push", newGUID(), h.pushEvent("main", main0, withAgents))
		h.overrideMain(withAgents) // pushed straight to main: in force once let through
		h.waitCheck(withAgents, bot.SyncCheck, "completed", "success")

		sip13 := siptest.SIP(13, "thirteen", "draft")
		h.gh.Push(h.repo, "agent-13", map[string]string{sip13.Path: string(sip13.Content)})
		pr := h.gh.OpenPull(h.repo, "agent-13", "devin-ai")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		head := h.gh.HeadSHA(pr)
		run := h.waitCheck(head, bot.ApprovalCheck, "completed", "failure")
		if !strings.Contains(run.Title, "Blocked: @devin-ai is an agent") || !strings.Contains(run.Summary, "Assisted-by") {
			t.Errorf("an agent's pull request without a disclosure: %q\n%s", run.Title, run.Summary)
		}
		if !strings.Contains(run.Summary, "the agents @devin-ai may author pull requests") {
			t.Errorf("the check does not explain the agent rule:\n%s", run.Summary)
		}
		h.gh.SetPull(pr, "Adds SIP-13.\n\nAssisted-by: Devin (model 2026-10)", "")
		h.approveBy(pr, "maintainer")
		eventually(t, "the sponsor missing", func() bool {
			r := h.latest(head, bot.ApprovalCheck)
			return r != nil && r.Status == "in_progress" && strings.Contains(r.Summary, "a human sponsor")
		})
		h.approveBy(pr, "sam")
		h.waitCheck(head, bot.ApprovalCheck, "completed", "success")

		// The agent approving a human's pull request counts for nothing.
		sip14 := siptest.SIP(14, "fourteen", "draft")
		h.gh.Push(h.repo, "add-14", map[string]string{sip14.Path: string(sip14.Content)})
		human := h.gh.OpenPull(h.repo, "add-14", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", human))
		h.approveBy(human, "devin-ai")
		eventually(t, "the agent's approval not counted", func() bool {
			r := h.latest(h.gh.HeadSHA(human), bot.ApprovalCheck)
			return r != nil && r.Status == "in_progress" && strings.Contains(r.Summary, "@devin-ai: agents' approvals do not count")
		})
	})
}

// TestFirstTimeContributorLimit: a first-time contributor's second open
// pull request is blocked while the first is open; closing it unblocks.
func TestFirstTimeContributorLimit(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h, main0 := governedRepo(t, open, "draft")
		limited := h.gh.Push(h.repo, "main", map[string]string{policy.Path: agentPolicy})
		h.deliver("push", newGUID(), h.pushEvent("main", main0, limited))
		h.overrideMain(limited)
		h.waitCheck(limited, bot.SyncCheck, "completed", "success")
		a, b := siptest.SIP(13, "thirteen", "draft"), siptest.SIP(14, "fourteen", "draft")
		h.gh.Push(h.repo, "new-a", map[string]string{a.Path: string(a.Content)})
		h.gh.Push(h.repo, "new-b", map[string]string{b.Path: string(b.Content)})
		pa, pb := h.gh.OpenPull(h.repo, "new-a", "newbie"), h.gh.OpenPull(h.repo, "new-b", "newbie")
		for _, p := range []*githubtest.Pull{pa, pb} {
			h.gh.SetPull(p, "", "FIRST_TIME_CONTRIBUTOR")
			h.deliver("pull_request", newGUID(), h.pullEvent("opened", p))
		}
		h.waitCheck(h.gh.HeadSHA(pa), bot.ApprovalCheck, "in_progress", "")
		run := h.waitCheck(h.gh.HeadSHA(pb), bot.ApprovalCheck, "completed", "failure")
		if !strings.Contains(run.Title, "first-time contributor") {
			t.Errorf("the second pull request: %q", run.Title)
		}
		closePull(h, pa)
		h.deliver("pull_request", newGUID(), h.pullEvent("synchronize", pb))
		h.waitCheck(h.gh.HeadSHA(pb), bot.ApprovalCheck, "in_progress", "")
	})
}
