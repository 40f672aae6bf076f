package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
)

// maxReason bounds an override's reason.
const maxReason = 1000

// command is a `/sip` command on the first line of a comment.
type command struct {
	name, arg string
}

// parseCommand reads `/sip <name> [arg]` from the first line of a comment
// body; ok is false for any other comment.
func parseCommand(body string) (command, bool) {
	line, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "/sip")
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return command{}, false
	}
	name, arg, _ := strings.Cut(strings.TrimSpace(rest), " ")
	return command{name: strings.ToLower(name), arg: strings.TrimSpace(arg)}, true
}

// comment acts on a `/sip` command in a newly created comment. Edited
// comments are not commands (an edit could turn an old comment into an
// override after the fact), bots' comments are ignored, and each command
// is answered once per comment, however often it is delivered.
func (a *App) comment(ctx context.Context, e *github.IssueCommentEvent) error {
	if e.GetAction() != "created" {
		return nil
	}
	c := e.GetComment()
	cmd, ok := parseCommand(c.GetBody())
	if !ok || c.GetUser().GetType() == "Bot" || strings.HasSuffix(c.GetUser().GetLogin(), "[bot]") {
		return nil
	}
	t, err := targetOf(e.Installation, e.Repo)
	if err != nil {
		return err
	}
	gh := a.gh.installation(t.Installation).client
	number := e.GetIssue().GetNumber()
	isPull := e.GetIssue().IsPullRequest()
	reply := func(text string) error { return a.reply(ctx, gh, t, number, c.GetID(), text) }
	user := c.GetUser().GetLogin()
	switch cmd.name {
	case "override":
		return a.override(ctx, gh, t, number, isPull, c.GetID(), user, cmd.arg, reply)
	case "why":
		if !isPull {
			return reply("`/sip why` answers on a pull request: it says what blocks it.")
		}
		t.Number = number
		return a.why(ctx, gh, t, reply)
	}
	return reply(fmt.Sprintf("Unknown command `/sip %s`. Commands: `/sip why` (on a pull request: what blocks it), "+
		"`/sip override <reason>` (an admin: let a pull request, or a refused commit on its issue, through on record).", cmd.name))
}

// override records an override by a person the policy names, with a
// reason: on a pull request, of its approval at its current head; on the
// issue of a refused commit, of that commit.
func (a *App) override(ctx context.Context, gh *github.Client, t target, number int, isPull bool, commentID int64, user, reason string,
	reply func(string) error) error {
	if reason == "" {
		return reply("An override needs a reason, recorded with it: `/sip override <reason>`.")
	}
	if len([]rune(reason)) > maxReason {
		return reply(fmt.Sprintf("An override's reason is at most %d characters.", maxReason))
	}
	pol, ref, err := a.trustedPolicy(ctx, gh, t)
	var bad *policyError
	if errors.As(err, &bad) {
		return reply(fmt.Sprintf("No override is possible while `%s` at %s cannot be used: %s", policy.Path, short(ref), bad))
	}
	if err != nil {
		return err
	}
	j := &githubJudge{ctx: ctx, gh: gh, t: t, member: map[string]bool{}, changed: map[string]bool{}}
	ok, err := pol.MayOverride(j, user, false)
	if errors.As(err, &bad) {
		return reply(fmt.Sprintf("No override is possible while `%s` at %s cannot be used: %s", policy.Path, short(ref), bad))
	}
	if err != nil {
		return err
	}
	if !ok {
		o := pol.Overriders()
		return reply(fmt.Sprintf("@%s may not override the policy: only %s (%s) may, under `%s` at %s.", user, o.Name, o.Describe(), policy.Path, short(ref)))
	}
	var subject string
	var next func() error
	if isPull {
		pr, _, err := gh.PullRequests.Get(ctx, t.Owner, t.Name, number)
		if err != nil {
			return fmt.Errorf("%s#%d: %w", t.fullName(), number, err)
		}
		if pr.GetState() != "open" {
			return reply("This pull request is closed: there is nothing to override. To let a commit it merged through, comment on the issue the App opened about it.")
		}
		subject = pullSubject(number, pr.GetHead().GetSHA())
		p := t
		p.Number = number
		next = func() error {
			return a.enqueue(ctx, fmt.Sprintf("sip:override:%d:%d", t.RepoID, commentID), eventCheckPull, pullKey(t.RepoID, number), p)
		}
	} else {
		v, err := a.store.Verification(ctx, t.RepoID)
		if err != nil && !errors.Is(err, registry.ErrNotFound) {
			return err
		}
		if err != nil || v.Issue != number || v.Refused == "" {
			return reply("There is nothing to override here: `/sip override <reason>` works on a pull request, or on the issue the App keeps about a refused commit while it is refused.")
		}
		subject = "commit:" + v.Refused
		next = func() error {
			return a.enqueue(ctx, fmt.Sprintf("sip:sync:%d:override:%d", t.RepoID, commentID), eventSync, fmt.Sprintf("repo:%d/push", t.RepoID), t)
		}
	}
	at := a.now().UTC()
	fresh, err := a.store.AddOverride(ctx, &inbox.Override{CommentID: commentID, RepoID: t.RepoID, Subject: subject, By: user, Reason: reason, At: at})
	if err != nil {
		return err
	}
	if !fresh {
		return nil // recorded already: a replayed comment
	}
	a.metrics.overrides.Inc()
	a.log.Info("policy overridden", "repository", t.fullName(), "subject", subject, "by", user, "reason", reason)
	if err := reply(fmt.Sprintf("Override recorded: @%s let %s through at %s, because: %s", user, describeSubject(subject), at.Format(time.RFC3339), quoteLine(reason))); err != nil {
		return err
	}
	return next()
}

func describeSubject(s string) string {
	if c, ok := strings.CutPrefix(s, "commit:"); ok {
		return "commit " + short(c)
	}
	n, head, _ := strings.Cut(strings.TrimPrefix(s, "pull:"), "@")
	return "pull request #" + n + " at " + short(head)
}

// quoteLine keeps a reason on one line for a reply.
func quoteLine(s string) string {
	return "“" + strings.Join(strings.Fields(s), " ") + "”"
}

// trustedPolicy is the policy an override is judged by: the policy of the
// commit the registry serves, for the repository it follows (the default
// branch may hold an unverified policy change), else the default branch's.
func (a *App) trustedPolicy(ctx context.Context, gh *github.Client, t target) (*policy.Policy, string, error) {
	ref := t.DefaultBranch
	if a.follows(t) {
		st, err := a.store.SyncState(ctx)
		if err != nil {
			return nil, "", err
		}
		if st.CommitSHA != "" {
			ref = st.CommitSHA
			// A commit the repository does not have (the registry was
			// synced from elsewhere) has no policy: fail closed, rather
			// than read GitHub's "not found" as "no policy file".
			_, resp, err := gh.Repositories.GetCommit(ctx, t.Owner, t.Name, ref, &github.ListOptions{PerPage: 1})
			if resp != nil && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusUnprocessableEntity) {
				return nil, ref, &policyError{fmt.Errorf("the registry serves commit %s, which %s does not have: sync it from this repository", short(ref), t.fullName())}
			}
			if err != nil {
				return nil, ref, fmt.Errorf("%s: reading commit %s: %w", t, short(ref), err)
			}
		}
	}
	p, err := a.policyAt(ctx, gh, t, ref)
	return p, ref, err
}

// overridesOf lists the overrides of a pull request at its head.
func (a *App) overridesOf(ctx context.Context, t target, head string) ([]*inbox.Override, error) {
	return a.store.Overrides(ctx, t.RepoID, pullSubject(t.Number, head))
}

// why answers `/sip why`: what the pull request still needs, first.
func (a *App) why(ctx context.Context, gh *github.Client, t target, reply func(string) error) error {
	pr, _, err := gh.PullRequests.Get(ctx, t.Owner, t.Name, t.Number)
	if err != nil {
		return fmt.Errorf("%s: %w", t, err)
	}
	runs, _, err := gh.Checks.ListCheckRunsForRef(ctx, t.Owner, t.Name, pr.GetHead().GetSHA(), &github.ListCheckRunsOptions{
		AppID: github.Int64(a.cfg.AppID), Filter: github.String("latest")})
	if err != nil {
		return fmt.Errorf("%s: listing check runs: %w", t, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "What blocks this pull request at %s:\n\n", short(pr.GetHead().GetSHA()))
	blocked := false
	for _, name := range []string{ValidationCheck, ApprovalCheck} {
		var latest *github.CheckRun
		for _, r := range runs.CheckRuns {
			if r.GetName() == name && (latest == nil || r.GetID() > latest.GetID()) {
				latest = r
			}
		}
		switch {
		case latest == nil:
			blocked = true
			fmt.Fprintf(&b, "- **%s**: not run yet on this head.\n", name)
		case latest.GetConclusion() != "success":
			blocked = true
			fmt.Fprintf(&b, "- **%s**: %s\n", name, latest.GetOutput().GetTitle())
		}
	}
	if !blocked {
		b.WriteString("Nothing: every SIP check is green.\n")
	} else {
		b.WriteString("\nThe checks' summaries say who can satisfy each requirement.\n")
	}
	return reply(b.String())
}

// reply answers a comment once: the answer carries the comment's id, so a
// replayed delivery finds it and posts nothing twice.
func (a *App) reply(ctx context.Context, gh *github.Client, t target, number int, commentID int64, text string) error {
	marker := fmt.Sprintf("<!-- sip:reply:%d -->", commentID)
	said, err := a.hasComment(ctx, gh, t, number, marker)
	if err != nil || said {
		return err
	}
	if _, _, err := gh.Issues.CreateComment(ctx, t.Owner, t.Name, number, &github.IssueComment{Body: github.String(marker + "\n" + text)}); err != nil {
		return fmt.Errorf("%s#%d: reply: %w", t.fullName(), number, err)
	}
	return nil
}
