package bot

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
)

// checkResult is a check run to post.
type checkResult struct {
	name        string
	status      string // "completed" when empty
	conclusion  string
	title       string
	summary     string
	annotations []*github.CheckRunAnnotation
}

func (c checkResult) completed() bool { return c.status == "" || c.status == "completed" }

// postCheck posts a check run on a head commit, unless the latest run of
// the same name already says the same thing (a retried or duplicate
// delivery posts nothing twice). A run still in progress is updated in
// place when the new result has no annotations (annotations sent in an
// update are appended, not replaced, so a result with annotations always
// gets a run of its own).
func (a *App) postCheck(ctx context.Context, gh *github.Client, t target, head string, c checkResult) error {
	runs, _, err := gh.Checks.ListCheckRunsForRef(ctx, t.Owner, t.Name, head, &github.ListCheckRunsOptions{
		CheckName: github.String(c.name), AppID: github.Int64(a.cfg.AppID), Filter: github.String("latest")})
	if err != nil {
		return fmt.Errorf("%s: listing check runs: %w", t, err)
	}
	var latest *github.CheckRun
	for _, r := range runs.CheckRuns {
		if r.GetName() == c.name && (latest == nil || r.GetID() > latest.GetID()) {
			latest = r
		}
	}
	now := &github.Timestamp{Time: a.now()}
	output := &github.CheckRunOutput{Title: github.String(c.title), Summary: github.String(c.summary)}
	if latest != nil && !t.Force && latest.GetStatus() == statusOf(c) && latest.GetConclusion() == conclusionOf(c) &&
		latest.GetOutput().GetTitle() == c.title && latest.GetOutput().GetSummary() == c.summary {
		return nil
	}
	if latest != nil && latest.GetStatus() != "completed" && len(c.annotations) == 0 {
		opts := github.UpdateCheckRunOptions{Name: c.name, Status: github.String(statusOf(c)), Output: output}
		if c.completed() {
			opts.Conclusion, opts.CompletedAt = github.String(c.conclusion), now
		}
		if _, _, err := gh.Checks.UpdateCheckRun(ctx, t.Owner, t.Name, latest.GetID(), opts); err != nil {
			return fmt.Errorf("%s: updating check run %q: %w", t, c.name, err)
		}
		return nil
	}
	first := c.annotations[:min(len(c.annotations), annotationsPerRequest)]
	opts := github.CreateCheckRunOptions{Name: c.name, HeadSHA: head, Status: github.String(statusOf(c)), StartedAt: now,
		ExternalID: github.String(fmt.Sprintf("%d:%d", t.RepoID, t.Number)),
		Output:     &github.CheckRunOutput{Title: output.Title, Summary: output.Summary, Annotations: first}}
	rest := c.annotations[len(first):]
	if c.completed() && len(rest) == 0 {
		opts.Conclusion, opts.CompletedAt = github.String(c.conclusion), now
	} else if c.completed() {
		opts.Status = github.String("in_progress")
	}
	run, _, err := gh.Checks.CreateCheckRun(ctx, t.Owner, t.Name, opts)
	if err != nil {
		return fmt.Errorf("%s: creating check run %q: %w", t, c.name, err)
	}
	for len(rest) > 0 {
		batch := rest[:min(len(rest), annotationsPerRequest)]
		rest = rest[len(batch):]
		upd := github.UpdateCheckRunOptions{Name: c.name,
			Output: &github.CheckRunOutput{Title: output.Title, Summary: output.Summary, Annotations: batch}}
		if len(rest) == 0 {
			upd.Status, upd.Conclusion, upd.CompletedAt = github.String("completed"), github.String(c.conclusion), &github.Timestamp{Time: a.now()}
		}
		if _, _, err := gh.Checks.UpdateCheckRun(ctx, t.Owner, t.Name, run.GetID(), upd); err != nil {
			return fmt.Errorf("%s: adding annotations to check run %q: %w", t, c.name, err)
		}
	}
	return nil
}

func statusOf(c checkResult) string {
	if c.completed() {
		return "completed"
	}
	return c.status
}

func conclusionOf(c checkResult) string {
	if c.completed() {
		return c.conclusion
	}
	return ""
}

// upsertComment keeps the App's one comment on a pull request: found by
// its marker among the comments of bots, edited when its text changes,
// written again if someone deleted it.
func (a *App) upsertComment(ctx context.Context, gh *github.Client, t target, body string) error {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var mine *github.IssueComment
	for {
		comments, resp, err := gh.Issues.ListComments(ctx, t.Owner, t.Name, t.Number, opts)
		if err != nil {
			return fmt.Errorf("%s: listing comments: %w", t, err)
		}
		for _, c := range comments {
			if c.GetUser().GetType() == "Bot" && strings.HasPrefix(c.GetBody(), commentMarker) {
				mine = c
			}
		}
		if resp.NextPage == 0 || mine != nil {
			break
		}
		opts.Page = resp.NextPage
	}
	if mine != nil {
		if mine.GetBody() == body {
			return nil
		}
		_, resp, err := gh.Issues.EditComment(ctx, t.Owner, t.Name, mine.GetID(), &github.IssueComment{Body: github.String(body)})
		if err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
			if err != nil {
				return fmt.Errorf("%s: editing the comment: %w", t, err)
			}
			return nil
		}
		// Deleted since it was listed: write it again.
	}
	if _, _, err := gh.Issues.CreateComment(ctx, t.Owner, t.Name, t.Number, &github.IssueComment{Body: github.String(body)}); err != nil {
		return fmt.Errorf("%s: commenting: %w", t, err)
	}
	return nil
}
