package bot_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

// commentEvent is an issue_comment delivery for a comment of the fake, on
// an issue or (isPull) a pull request.
func (h *harness) commentEvent(action string, issue int, isPull bool, c githubtest.Comment) map[string]any {
	is := map[string]any{"number": issue, "title": "t", "state": "open", "user": map[string]any{"login": "someone", "type": "User"}}
	if isPull {
		is["pull_request"] = map[string]any{"url": "https://api.github.example/repos/octo-org/sips/pulls/" + strconv.Itoa(issue)}
	}
	return map[string]any{"action": action, "issue": is,
		"comment":      map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.User, "type": "User"}},
		"repository":   h.gh.RepoJSON(h.repo),
		"installation": map[string]any{"id": h.repo.Installation},
		"sender":       map[string]any{"login": c.User, "type": "User"}}
}

// say posts a comment as user and delivers it; it returns the delivery id.
func (h *harness) say(issue int, isPull bool, user, body string) (githubtest.Comment, string) {
	c := h.gh.CommentAs(h.repo, issue, user, body)
	guid := newGUID()
	h.deliver("issue_comment", guid, h.commentEvent("created", issue, isPull, c))
	return c, guid
}

// replyTo waits for the App's answer to a comment.
func (h *harness) replyTo(issue int, c githubtest.Comment) string {
	h.t.Helper()
	marker := "<!-- sip:reply:" + itoa(c.ID) + " -->"
	var body string
	eventually(h.t, "the answer to "+c.Body, func() bool {
		n := 0
		for _, r := range h.gh.Comments(h.repo, issue) {
			if strings.HasPrefix(r.Body, marker) {
				body, n = r.Body, n+1
			}
		}
		if n > 1 {
			h.t.Fatalf("%d answers to %q, want 1", n, c.Body)
		}
		return n == 1
	})
	return body
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// done waits until a delivery is processed.
func (h *harness) done(ctx context.Context, guid string) {
	h.t.Helper()
	eventually(h.t, "delivery "+guid+" processed", func() bool {
		d, err := h.store.Delivery(ctx, guid)
		return err == nil && (d.Status == inbox.Done || d.Status == inbox.Dead)
	})
}

// verificationIssue waits for the App's open issue about main.
func (h *harness) verificationIssue() githubtest.Issue {
	h.t.Helper()
	var is githubtest.Issue
	eventually(h.t, "the verification issue", func() bool {
		for _, i := range h.gh.Issues(h.repo) {
			if i.State == "open" && strings.Contains(i.Body, "sip:main-verification") {
				is = i
				return true
			}
		}
		return false
	})
	return is
}

// TestDirectPushToMainIsNotSynced: a commit pushed to main without a pull
// request is refused: the registry keeps serving the commit before, the
// commit gets a failing check, one issue says what was missing and how to
// resolve it, the metric and readiness details show it. Overrides by
// people without rights, without a reason, or in edited comments change
// nothing; an admin's override is recorded once (a replayed comment adds
// nothing) and the registry syncs; the issue closes.
func TestDirectPushToMainIsNotSynced(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h, main0 := governedRepo(t, open, "draft")
		ctx := t.Context()
		sip13 := siptest.SIP(13, "thirteen", "draft")
		pushed := h.gh.Push(h.repo, "main", map[string]string{sip13.Path: string(sip13.Content)})
		h.deliver("push", newGUID(), h.pushEvent("main", main0, pushed))
		run := h.waitCheck(pushed, bot.VerifyCheck, "completed", "failure")
		if !strings.Contains(run.Summary, "without a pull request") || !strings.Contains(run.Summary, "revert") {
			t.Errorf("the refusal does not say what was missing and how to resolve it:\n%s", run.Summary)
		}
		is := h.verificationIssue()
		if !strings.Contains(is.Body, short(pushed)) || !strings.Contains(is.Body, "/sip override") {
			t.Errorf("issue body:\n%s", is.Body)
		}
		if st, _ := h.store.SyncState(ctx); st.CommitSHA != main0 {
			t.Errorf("the registry serves %s, want %s", st.CommitSHA, main0)
		}
		if m := h.metrics(); !strings.Contains(m, "sip_github_main_unverified 1") {
			t.Errorf("metrics do not show the refusal")
		}
		if d := h.app.ReadyDetails(ctx); !strings.Contains(d["github_main"], "refused commit "+short(pushed)) {
			t.Errorf("readiness details = %v", d)
		}
		resp, err := http.Get(h.srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		ready, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(ready), `"github_main":"refused commit `+short(pushed)) {
			t.Errorf("/readyz = %s", ready)
		}

		// Bad input: someone without rights (who also writes the marker of
		// the answer to their next comment, to silence it); an admin
		// without a reason; an edited comment; a bot.
		c, _ := h.say(is.Number, false, "author", "/sip override I know what I am doing <!-- sip:reply:"+itoa(h.nextCommentID())+" -->")
		if r := h.replyTo(is.Number, c); !strings.Contains(r, "@author may not override") {
			t.Errorf("answer to a user without rights: %s", r)
		}
		c, _ = h.say(is.Number, false, "admin", "/sip override   ")
		if r := h.replyTo(is.Number, c); !strings.Contains(r, "needs a reason") {
			t.Errorf("answer to an override without a reason: %s", r)
		}
		edited := h.gh.CommentAs(h.repo, is.Number, "admin", "/sip override sneaked in by an edit")
		guid := newGUID()
		h.deliver("issue_comment", guid, h.commentEvent("edited", is.Number, false, edited))
		if _, err := h.store.Delivery(ctx, guid); err == nil {
			t.Errorf("an edited comment was queued; it is dropped at the door")
		}
		botComment := h.gh.CommentAs(h.repo, is.Number, "helper[bot]", "/sip override a bot says so")
		botGUID := newGUID()
		h.deliver("issue_comment", botGUID, h.commentEvent("created", is.Number, false, botComment))
		h.done(ctx, botGUID)
		if st, _ := h.store.SyncState(ctx); st.CommitSHA != main0 {
			t.Errorf("after refused overrides the registry serves %s, want %s", st.CommitSHA, main0)
		}

		// An admin overrides, with a reason: recorded, synced, resolved.
		c, _ = h.say(is.Number, false, "admin", "/sip override Hotfix agreed on the maintainers' call")
		if r := h.replyTo(is.Number, c); !strings.Contains(r, "Override recorded: @admin let commit "+short(pushed)) {
			t.Errorf("answer to the admin: %s", r)
		}
		eventually(t, "the registry at the overridden commit", func() bool {
			st, err := h.store.SyncState(ctx)
			return err == nil && st.CommitSHA == pushed
		})
		ok := h.waitCheck(pushed, bot.VerifyCheck, "completed", "success")
		if !strings.Contains(ok.Summary, short(pushed)+": by @admin at ") || !strings.Contains(ok.Summary, "Hotfix agreed on the maintainers' call") {
			t.Errorf("the check does not show the override on record:\n%s", ok.Summary)
		}
		eventually(t, "the issue closed", func() bool {
			for _, i := range h.gh.Issues(h.repo) {
				if i.Number == is.Number {
					return i.State == "closed" && strings.Contains(i.Body, "Resolved")
				}
			}
			return false
		})
		// Replayed: the same comment delivered again records nothing more.
		again := newGUID()
		h.deliver("issue_comment", again, h.commentEvent("created", is.Number, false, c))
		h.done(ctx, again)
		h.replyTo(is.Number, c) // still exactly one answer
		os, err := h.store.Overrides(ctx, h.repoID(), "commit:"+pushed)
		if err != nil || len(os) != 1 || os[0].By != "admin" || os[0].Reason != "Hotfix agreed on the maintainers' call" {
			t.Errorf("overrides on record = %+v, %v", os, err)
		}
		if m := h.metrics(); !strings.Contains(m, "sip_github_overrides_total 1") || !strings.Contains(m, "sip_github_main_unverified 0") {
			t.Errorf("metrics after the override:\n%s", m)
		}
		if n := len(h.gh.Issues(h.repo)); n != 1 {
			t.Errorf("%d issues, want the one kept current", n)
		}
	})
}

// TestPolicyChangeMergedWithoutApprovalIsNotTrusted: a pull request that
// makes its author an admin, merged without the admin approval its check
// waited for, is refused on main; under it, the author cannot override
// (overrides are judged by the policy the registry serves), and a later
// pull request approved only by the author is not synced either. A pull
// request that puts the policy back resolves it without an approval, and
// the registry syncs.
func TestPolicyChangeMergedWithoutApprovalIsNotTrusted(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h, main0 := governedRepo(t, open, "draft")
		ctx := t.Context()
		loosened := strings.Replace(modulesPolicy, "users: [maintainer]", "users: [maintainer, author]", 1)
		loosened = strings.Replace(loosened, "users: [admin]", "users: [admin, author]", 1)
		h.gh.Push(h.repo, "loosen", map[string]string{policy.Path: loosened})
		pr := h.gh.OpenPull(h.repo, "loosen", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		h.waitCheck(h.gh.HeadSHA(pr), bot.ApprovalCheck, "in_progress", "")
		merged := h.gh.Merge(h.repo, pr) // an admin merging past the check
		h.deliver("push", newGUID(), h.pushEvent("main", main0, merged))
		run := h.waitCheck(merged, bot.VerifyCheck, "completed", "failure")
		if !strings.Contains(run.Summary, "a governance file") || !strings.Contains(run.Summary, "admins (@admin)") {
			t.Errorf("the refusal does not name the missing admin approval:\n%s", run.Summary)
		}
		is := h.verificationIssue()
		c, _ := h.say(is.Number, false, "author", "/sip override my own policy says I may")
		if r := h.replyTo(is.Number, c); !strings.Contains(r, "@author may not override") {
			t.Errorf("the author overrode under their own unverified policy: %s", r)
		}

		// Under the new policy, the author's approval would count; it is
		// not in force, so it does not, and a SIP merged with it alone is
		// not synced while the refusal stands.
		sip13 := siptest.SIP(13, "thirteen", "draft")
		h.gh.Push(h.repo, "add-13", map[string]string{sip13.Path: string(sip13.Content)})
		pr13 := h.gh.OpenPull(h.repo, "add-13", "mallory")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr13))
		h.waitCheck(h.gh.HeadSHA(pr13), bot.ValidationCheck, "completed", "success")
		h.approveBy(pr13, "author")
		eventually(t, "the author's approval not counted", func() bool {
			r := h.latest(h.gh.HeadSHA(pr13), bot.ApprovalCheck)
			return r != nil && r.Status == "in_progress" && strings.Contains(r.Summary, "@author: not among those who may approve")
		})
		merged13 := h.gh.Merge(h.repo, pr13)
		push := newGUID()
		h.deliver("push", push, h.pushEvent("main", merged, merged13))
		h.done(ctx, push)
		if st, _ := h.store.SyncState(ctx); st.CommitSHA != main0 {
			t.Errorf("the registry serves %s, want %s", st.CommitSHA, main0)
		}

		// Putting the policy back resolves its refusal; the SIP merged
		// under it with the author's approval alone is still refused (the
		// policy in force judged it), until an admin lets it through.
		h.gh.Push(h.repo, "restore", map[string]string{policy.Path: modulesPolicy})
		back := h.gh.OpenPull(h.repo, "restore", "maintainer")
		restored := h.gh.Merge(h.repo, back)
		h.deliver("push", newGUID(), h.pushEvent("main", merged13, restored))
		eventually(t, "the issue names the SIP merged under the unapproved policy", func() bool {
			for _, i := range h.gh.Issues(h.repo) {
				if i.Number == is.Number {
					return strings.Contains(i.Body, short(merged13)) && strings.Contains(i.Body, "1 approval for a new SIP")
				}
			}
			return false
		})
		if st, _ := h.store.SyncState(ctx); st.CommitSHA != main0 {
			t.Errorf("the registry serves %s, want %s", st.CommitSHA, main0)
		}
		h.overrideMain(merged13)
		eventually(t, "the registry at the restored commit", func() bool {
			st, err := h.store.SyncState(ctx)
			return err == nil && st.CommitSHA == restored
		})
		h.waitCheck(restored, bot.VerifyCheck, "completed", "success")
	})
}

// TestApprovedMergeIsVerified: a pull request merged with its approvals
// and a green check is verified and synced.
func TestApprovedMergeIsVerified(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h, main0 := governedRepo(t, open, "draft")
		sip13 := siptest.SIP(13, "thirteen", "draft")
		h.gh.Push(h.repo, "add-13", map[string]string{sip13.Path: string(sip13.Content)})
		pr := h.gh.OpenPull(h.repo, "add-13", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		h.waitCheck(h.gh.HeadSHA(pr), bot.ValidationCheck, "completed", "success")
		h.approveBy(pr, "maintainer")
		h.waitCheck(h.gh.HeadSHA(pr), bot.ApprovalCheck, "completed", "success")
		merged := h.gh.Merge(h.repo, pr)
		h.deliver("push", newGUID(), h.pushEvent("main", main0, merged))
		h.waitCheck(merged, bot.VerifyCheck, "completed", "success")
		h.waitCheck(merged, bot.SyncCheck, "completed", "success")
		if n := len(h.gh.Issues(h.repo)); n != 0 {
			t.Errorf("%d issues after an approved merge, want 0", n)
		}

		// Approved only after it merged: the approval was not there at
		// merge time, and a bot's approval never counts.
		sip14 := siptest.SIP(14, "fourteen", "draft")
		h.gh.Push(h.repo, "add-14", map[string]string{sip14.Path: string(sip14.Content)})
		late := h.gh.OpenPull(h.repo, "add-14", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", late))
		h.waitCheck(h.gh.HeadSHA(late), bot.ValidationCheck, "completed", "success")
		h.approveBy(late, "renovate[bot]")
		eventually(t, "the bot's approval not counted", func() bool {
			r := h.latest(h.gh.HeadSHA(late), bot.ApprovalCheck)
			return r != nil && r.Status == "in_progress" && strings.Contains(r.Summary, "@renovate[bot]: bots and Apps do not count")
		})
		lateMerge := h.gh.Merge(h.repo, late)
		h.gh.AddReview(late, "maintainer", "APPROVED")
		h.deliver("push", newGUID(), h.pushEvent("main", merged, lateMerge))
		run := h.waitCheck(lateMerge, bot.VerifyCheck, "completed", "failure")
		if !strings.Contains(run.Summary, "1 approval for a new SIP (SIP-14)") {
			t.Errorf("an approval given after the merge counted:\n%s", run.Summary)
		}
	})
}

func short(sha string) string { return sha[:7] }

// repoID is the fake repository's id.
func (h *harness) repoID() int64 { return h.repo.ID }

// TestOverrideOnAPullRequest: an admin's `/sip override <reason>` on a pull
// request turns its approval check green at that head, on record (who,
// why, when, in the check); merged, it is verified by the same override.
// A new push needs approvals again. `/sip why` says what blocks; a
// command from someone without rights changes nothing.
func TestOverrideOnAPullRequest(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h, main0 := governedRepo(t, open, "draft")
		sip13 := siptest.SIP(13, "thirteen", "draft")
		h.gh.Push(h.repo, "add-13", map[string]string{sip13.Path: string(sip13.Content)})
		pr := h.gh.OpenPull(h.repo, "add-13", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		head := h.gh.HeadSHA(pr)
		h.waitCheck(head, bot.ValidationCheck, "completed", "success")
		h.waitCheck(head, bot.ApprovalCheck, "in_progress", "")

		c, _ := h.say(pr.Number, true, "author", "/sip why")
		if r := h.replyTo(pr.Number, c); !strings.Contains(r, "**SIP approval**: Waiting for 1 approval from maintainers") {
			t.Errorf("/sip why: %s", r)
		}
		c, _ = h.say(pr.Number, true, "author", "/sip override trust me")
		if r := h.replyTo(pr.Number, c); !strings.Contains(r, "@author may not override") {
			t.Errorf("override by the author: %s", r)
		}
		c, _ = h.say(pr.Number, true, "admin", "/sip override Security fix, reviewed in private")
		h.replyTo(pr.Number, c)
		run := h.waitCheck(head, bot.ApprovalCheck, "completed", "success")
		if !strings.HasPrefix(run.Title, "Overridden by @admin") || !strings.Contains(run.Summary, "Security fix, reviewed in private") {
			t.Errorf("the overridden approval check: %q\n%s", run.Title, run.Summary)
		}
		merged := h.gh.Merge(h.repo, pr)
		h.deliver("push", newGUID(), h.pushEvent("main", main0, merged))
		h.waitCheck(merged, bot.VerifyCheck, "completed", "success")
		h.waitCheck(merged, bot.SyncCheck, "completed", "success")

		// An override covers the head it was given at.
		sip14 := siptest.SIP(14, "fourteen", "draft")
		h.gh.Push(h.repo, "add-14", map[string]string{sip14.Path: string(sip14.Content)})
		pr14 := h.gh.OpenPull(h.repo, "add-14", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr14))
		c, _ = h.say(pr14.Number, true, "admin", "/sip override first version only")
		h.replyTo(pr14.Number, c)
		h.waitCheck(h.gh.HeadSHA(pr14), bot.ApprovalCheck, "completed", "success")
		h.gh.Push(h.repo, "add-14", map[string]string{sip14.Path: string(sip14.Content) + "\nMore.\n"})
		h.deliver("pull_request", newGUID(), h.pullEvent("synchronize", pr14))
		h.waitCheck(h.gh.HeadSHA(pr14), bot.ApprovalCheck, "in_progress", "")

		// An override stands in for approvals, not for validation: merged
		// past a failing validation check, the commit is refused on main.
		broken := siptest.SIP(16, "Broken_Id", "draft")
		h.gh.Push(h.repo, "broken", map[string]string{broken.Path: string(broken.Content)})
		pb := h.gh.OpenPull(h.repo, "broken", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pb))
		h.waitCheck(h.gh.HeadSHA(pb), bot.ValidationCheck, "completed", "failure")
		c, _ = h.say(pb.Number, true, "admin", "/sip override ship it")
		h.replyTo(pb.Number, c)
		h.waitCheck(h.gh.HeadSHA(pb), bot.ApprovalCheck, "completed", "success")
		mergedBroken := h.gh.Merge(h.repo, pb)
		h.deliver("push", newGUID(), h.pushEvent("main", merged, mergedBroken))
		run = h.waitCheck(mergedBroken, bot.VerifyCheck, "completed", "failure")
		if !strings.Contains(run.Summary, "**SIP validation** check on the pull request's head") || strings.Contains(run.Summary, "approval for") {
			t.Errorf("the refusal of a merge past its failing validation:\n%s", run.Summary)
		}
	})
}

func TestCommandParsing(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{"/sip why", true},
		{"  /sip override  a reason \nmore lines", true},
		{"/sipwhy", false},
		{"please /sip why", false},
		{"> /sip override quoted", false},
	} {
		t.Run(tc.body, func(t *testing.T) {
			if _, ok := bot.ParseCommand(tc.body); ok != tc.ok {
				t.Errorf("ParseCommand(%q) ok = %v, want %v", tc.body, ok, tc.ok)
			}
		})
	}
}

// nextCommentID is the id the fake gives the comment after the next one
// (ids count up from one counter).
func (h *harness) nextCommentID() int64 { return h.gh.CommentAs(h.repo, 0, "nobody", "x").ID + 1 }

// TestRegistryFromElsewhereFailsClosed: a registry synced from a commit the
// repository does not have has no policy in force: approvals fail closed,
// saying why, and main is not verified (the commit is not on it).
func TestRegistryFromElsewhereFailsClosed(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		files := []registry.File{}
		for p, c := range bundled(t) {
			files = append(files, registry.File{Path: p, Content: []byte(c)})
		}
		elsewhere := strings.Repeat("e", 40)
		if _, err := registry.Sync(t.Context(), h.store, registry.Source{Files: files, Commit: elsewhere, Name: "elsewhere"}, time.Now()); err != nil {
			t.Fatal(err)
		}
		h.run()
		sip13 := siptest.SIP(13, "thirteen", "draft")
		h.gh.Push(h.repo, "add-13", map[string]string{sip13.Path: string(sip13.Content)})
		pr := h.gh.OpenPull(h.repo, "add-13", "author")
		h.deliver("pull_request", newGUID(), h.pullEvent("opened", pr))
		r := h.waitCheck(h.gh.HeadSHA(pr), bot.ApprovalCheck, "completed", "failure")
		if !strings.Contains(r.Summary, "which octo-org/sips does not have") {
			t.Errorf("approval under a registry synced from elsewhere: %q\n%s", r.Title, r.Summary)
		}
		run := h.waitCheck(h.gh.Head(h.repo, "main"), bot.VerifyCheck, "completed", "failure")
		if !strings.Contains(run.Summary, "not an ancestor") {
			t.Errorf("verification from a commit not on main:\n%s", run.Summary)
		}
	})
}
