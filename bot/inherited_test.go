package bot_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/registry/siptest"
)

// TestOnlyWhatThePullRequestChangesFailsIt: main holds a broken SIP.
// A pull request that adds a valid SIP passes, and shows main's problem as
// a notice; one that edits the broken SIP without fixing it fails; one
// that deprecates a prerequisite fails for the active SIP it breaks, in a
// file it does not touch.
func TestOnlyWhatThePullRequestChangesFailsIt(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.gh.SetRole("admin", "admin")
		h.run()
		main0 := h.gh.Head(h.repo, "main")
		h.waitCheck(main0, bot.SyncCheck, "completed", "success")
		broken := siptest.SIP(20, "Broken_Id", "draft")
		main1 := h.gh.Push(h.repo, "main", map[string]string{broken.Path: string(broken.Content)})
		h.deliver("push", newGUID(), h.pushEvent("main", main0, main1))
		h.overrideMain(main1) // pushed past every check, let through by an admin
		h.waitCheck(main1, bot.SyncCheck, "completed", "failure")

		unrelated := siptest.SIP(21, "unrelated", "draft")
		h.gh.Push(h.repo, "unrelated", map[string]string{unrelated.Path: string(unrelated.Content)})
		edit := strings.Replace(string(broken.Content), `name: "Evaluation Broken_Id"`, `name: "Evaluation Still Broken"`, 1)
		h.gh.Push(h.repo, "edit-broken", map[string]string{broken.Path: edit})
		poaw := bundled(t)["evaluations/SIP-2.md"]
		deprecated := strings.NewReplacer("status: active", "status: deprecated", `version: "1.0.0"`, `version: "1.1.0"`,
			"updated_at: 2026-11-22", "updated_at: 2026-11-25").Replace(poaw)
		h.gh.Push(h.repo, "deprecate-poaw", map[string]string{"evaluations/SIP-2.md": deprecated})
		pu, pe, pd := h.gh.OpenPull(h.repo, "unrelated", "ann"), h.gh.OpenPull(h.repo, "edit-broken", "bob"), h.gh.OpenPull(h.repo, "deprecate-poaw", "cy")
		for _, p := range []*githubtest.Pull{pu, pe, pd} {
			h.deliver("pull_request", newGUID(), h.pullEvent("opened", p))
		}

		run := h.waitCheck(h.gh.HeadSHA(pu), bot.ValidationCheck, "completed", "success")
		if !strings.Contains(run.Title, "already on main") || !strings.Contains(run.Summary, "### Already on `main`") {
			t.Errorf("the unrelated pull request does not show main's problem: %q\n%s", run.Title, run.Summary)
		}
		notice := false
		for _, a := range run.Annotations {
			notice = notice || a["path"] == broken.Path && a["annotation_level"] == "notice"
		}
		if !notice {
			t.Errorf("main's problem is not a notice: %v", run.Annotations)
		}

		run = h.waitCheck(h.gh.HeadSHA(pe), bot.ValidationCheck, "completed", "failure")
		if !hasAnnotation(run, "id-format") {
			t.Errorf("editing the broken SIP without fixing it: %q %v", run.Title, run.Annotations)
		}
		run = h.waitCheck(h.gh.HeadSHA(pd), bot.ValidationCheck, "completed", "failure")
		if !hasAnnotation(run, "prerequisite-status") {
			t.Errorf("deprecating a prerequisite of active SIPs: %q %v", run.Title, run.Annotations)
		}
	})
}
