package bot_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/registry/siptest"
)

func hasAnnotation(run *githubtest.CheckRun, rule string) bool {
	for _, a := range run.Annotations {
		if a["title"] == rule {
			return true
		}
	}
	return false
}

// TestPullsAreCheckedAsTheyWouldMerge: when main moves, open pull requests
// are checked again against what they would merge into now. Two pull
// requests adding SIPs with one id are both green until one merges; then
// the other fails with id-duplicate, without a push of its own. A pull
// request whose SIP number main took meanwhile conflicts, and its preview
// does not claim to add it.
func TestPullsAreCheckedAsTheyWouldMerge(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.run()
		a, b := siptest.SIP(12, "same-id", "draft"), siptest.SIP(13, "same-id", "draft")
		taken := siptest.SIP(12, "late-twelve", "draft")
		h.gh.Push(h.repo, "add-a", map[string]string{a.Path: string(a.Content)})
		h.gh.Push(h.repo, "add-b", map[string]string{b.Path: string(b.Content)})
		h.gh.Push(h.repo, "late", map[string]string{taken.Path: string(taken.Content)})
		pa, pb := h.gh.OpenPull(h.repo, "add-a", "ann"), h.gh.OpenPull(h.repo, "add-b", "bob")
		for _, p := range []*githubtest.Pull{pa, pb} {
			h.deliver("pull_request", newGUID(), h.pullEvent("opened", p))
			h.waitCheck(h.gh.HeadSHA(p), bot.ValidationCheck, "completed", "success")
		}

		before := h.gh.Head(h.repo, "main")
		merge := h.gh.Merge(h.repo, pa)
		h.deliver("push", newGUID(), h.pushEvent("main", before, merge))
		run := h.waitCheck(h.gh.HeadSHA(pb), bot.ValidationCheck, "completed", "failure")
		if !hasAnnotation(run, "id-duplicate") {
			t.Errorf("after the first merged, the second reports no id-duplicate: %v", run.Annotations)
		}

		// Opened after SIP-12 merged, from a branch made before.
		late := h.gh.OpenPull(h.repo, "late", "lee")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", late))
		run = h.waitCheck(h.gh.HeadSHA(late), bot.ValidationCheck, "completed", "failure")
		if !strings.HasPrefix(run.Title, "Merge conflict with main") || !hasAnnotation(run, "merge-conflict") {
			t.Errorf("a number main took meanwhile: %q %v", run.Title, run.Annotations)
		}
		if strings.Contains(run.Summary, "add SIP-12") {
			t.Errorf("the preview claims to add SIP-12, which main holds:\n%s", run.Summary)
		}
	})
}

// TestMergeConflictIsReported: a pull request editing a SIP that main
// edited differently since is reported as a conflict, not validated
// against a stale base.
func TestMergeConflictIsReported(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.run()
		path := "evaluations/SIP-3.md"
		content := bundled(t)[path]
		edit := func(s string) string {
			return strings.Replace(strings.Replace(content, `version: "1.0.0"`, `version: "1.0.1"`, 1), "updated_at: 2026-11-22", "updated_at: 2026-11-23", 1) + s
		}
		h.gh.Push(h.repo, "edit-3", map[string]string{path: edit("\nThe branch's note.\n")})
		pr := h.gh.OpenPull(h.repo, "edit-3", "ann")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		h.waitCheck(h.gh.HeadSHA(pr), bot.ValidationCheck, "completed", "success")

		before := h.gh.Head(h.repo, "main")
		after := h.gh.Push(h.repo, "main", map[string]string{path: edit("\nMain's note.\n")})
		h.deliver("push", newGUID(), h.pushEvent("main", before, after))
		run := h.waitCheck(h.gh.HeadSHA(pr), bot.ValidationCheck, "completed", "failure")
		if !hasAnnotation(run, "merge-conflict") || !strings.Contains(run.Summary, "`"+path+"`") {
			t.Errorf("conflict not reported: %q\n%s", run.Title, run.Summary)
		}
	})
}

// TestTwoHundredOpenPullsWhenMainMoves: every open pull request is checked
// again when main moves, once, and none is lost.
func TestTwoHundredOpenPullsWhenMainMoves(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.run()
		var pulls []*githubtest.Pull
		for i := range 200 {
			branch := fmt.Sprintf("docs-%d", i)
			h.gh.Push(h.repo, branch, map[string]string{fmt.Sprintf("docs/note-%d.md", i): "A note.\n"})
			pulls = append(pulls, h.gh.OpenPull(h.repo, branch, "writer"))
		}
		before := h.gh.Head(h.repo, "main")
		after := h.gh.Push(h.repo, "main", map[string]string{"docs/main.md": "Main moved.\n"})
		push := h.pushEvent("main", before, after)
		h.deliver("push", newGUID(), push)
		h.deliver("push", newGUID(), push) // delivered twice: nothing queued twice
		for _, p := range pulls {
			h.waitCheck(h.gh.HeadSHA(p), bot.ValidationCheck, "completed", "success")
		}
		for _, p := range pulls[:5] {
			if n := len(h.gh.CheckRuns(h.gh.HeadSHA(p), bot.ValidationCheck)); n != 1 {
				t.Errorf("pull request #%d has %d validation runs, want 1", p.Number, n)
			}
		}
	})
}

// TestMainMovesWhileACheckRuns: main takes a pull request's SIP number
// while the App is still checking that pull request (its check run is
// being posted). The check that ends up on the pull request's head is the
// one against the new main: a failure, not the stale success.
func TestMainMovesWhileACheckRuns(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.run()
		main0 := h.gh.Head(h.repo, "main")
		h.waitCheck(main0, bot.SyncCheck, "completed", "success")

		mine := siptest.SIP(12, "my-twelve", "draft")
		h.gh.Push(h.repo, "mine", map[string]string{mine.Path: string(mine.Content)})
		p := h.gh.OpenPull(h.repo, "mine", "ann")
		held, release := h.gh.Hold(func(r *http.Request) bool {
			return r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/check-runs")
		})
		defer release()
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", p))
		select {
		case <-held:
		case <-t.Context().Done():
			t.Fatal("the check never reached GitHub")
		}
		// The check is computed against main0 and on its way to GitHub;
		// meanwhile main takes SIP-12.
		theirs := siptest.SIP(12, "their-twelve", "draft")
		after := h.gh.Push(h.repo, "main", map[string]string{theirs.Path: string(theirs.Content)})
		h.deliver("push", newGUID(), h.pushEvent("main", main0, after))
		release()
		run := h.waitCheck(h.gh.HeadSHA(p), bot.ValidationCheck, "completed", "failure")
		if !hasAnnotation(run, "merge-conflict") && !hasAnnotation(run, "sip-duplicate") {
			t.Errorf("the final check does not see main's SIP-12: %q %v", run.Title, run.Annotations)
		}
	})
}
