package bot_test

import (
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/inbox"
)

// TestRerunAndEditedEvents: "Re-run" on the check posts a new run even
// though nothing changed; a pull request retargeted to another base is
// checked again, one whose title changed is not.
func TestRerunAndEditedEvents(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		h.run()
		pr := h.openSIPPull("add")
		h.deliver("pull_request", newGUID(), h.pullEvent("ready_for_review", pr))
		head := h.gh.HeadSHA(pr)
		h.waitCheck(head, bot.ValidationCheck, "completed", "success")

		rerun := fixture(t, "derived/check_run/rerequested.rfc3339.derived.payload.json")
		cr := rerun["check_run"].(map[string]any)
		cr["head_sha"] = head
		cr["app"].(map[string]any)["id"] = h.gh.AppID
		cr["pull_requests"] = []any{map[string]any{"number": pr.Number,
			"base": map[string]any{"ref": "main", "repo": map[string]any{"id": h.repo.ID}}}}
		rerun["repository"] = h.gh.RepoJSON(h.repo)
		rerun["installation"] = map[string]any{"id": h.repo.Installation}
		if code := h.deliver("check_run", newGUID(), rerun); code != 202 {
			t.Fatalf("rerequested: status %d", code)
		}
		eventually(t, "a second validation run", func() bool { return len(h.gh.CheckRuns(head, bot.ValidationCheck)) == 2 })

		// Another App's check run being re-run is none of ours.
		cr["app"].(map[string]any)["id"] = 99
		other := newGUID()
		h.deliver("check_run", other, rerun)
		eventually(t, "the other App's event handled", func() bool {
			d, err := h.store.Delivery(t.Context(), other)
			return err == nil && d.Status == inbox.Done
		})
		if n := len(h.gh.CheckRuns(head, bot.ValidationCheck)); n != 2 {
			t.Errorf("%d validation runs after another App's re-run, want 2", n)
		}

		title := h.pullEvent("edited", pr)
		title["changes"] = map[string]any{"title": map[string]any{"from": "Old title"}}
		guid := newGUID()
		h.deliver("pull_request", guid, title)
		if _, err := h.store.Delivery(t.Context(), guid); err == nil {
			t.Error("a title edit was queued")
		}
		base := h.pullEvent("edited", pr)
		base["changes"] = map[string]any{"base": map[string]any{"ref": map[string]any{"from": "develop"}}}
		guid = newGUID()
		h.deliver("pull_request", guid, base)
		eventually(t, "the retargeted pull request checked", func() bool {
			d, err := h.store.Delivery(t.Context(), guid)
			return err == nil && d.Status == inbox.Done
		})
	})
}
