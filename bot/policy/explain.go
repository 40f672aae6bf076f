package policy

import (
	"fmt"
	"strings"

	"github.com/sipregistry/sip/bot/internal/markdown"
)

// Title is the decision in a line, for a check run's title.
func (d Decision) Title() string {
	switch d.State {
	case Approved:
		if len(d.Outcomes) == 0 {
			return "No SIP approval needed"
		}
		return "Approved"
	case Blocked:
		if len(d.Unmet) > 0 {
			return truncate("Blocked: "+d.Unmet[0], 200)
		}
		return "Changes requested by " + at(d.Blockers)
	}
	var waiting []string
	for _, o := range d.Outcomes {
		if n := o.Missing(); n > 0 {
			waiting = append(waiting, fmt.Sprintf("%s from %s (%s)", markdown.Plural(n, "approval"), strings.Join(o.WhoNames(), " or "), strings.Join(o.About, ", ")))
		}
	}
	return truncate("Waiting for "+strings.Join(waiting, "; "), 200)
}

// Explain says, in Markdown, which rules apply, who may approve, who has,
// what is missing, and which reviews did not count and why.
func (d Decision) Explain() string {
	var b strings.Builder
	switch d.State {
	case Approved:
		b.WriteString("Every rule that applies is met.\n\n")
	case Blocked:
		for _, u := range d.Unmet {
			fmt.Fprintf(&b, "Blocked: %s.\n\n", u)
		}
		if len(d.Blockers) > 0 {
			fmt.Fprintf(&b, "Changes requested by %s: their review blocks until they approve or it is dismissed.\n\n", at(d.Blockers))
		}
	default:
		b.WriteString("Waiting for approvals.\n\n")
	}
	if len(d.Outcomes) > 0 {
		b.WriteString("| Applies to | Rule | Who may approve | Approved by | Missing |\n|---|---|---|---|---|\n")
		for _, o := range d.Outcomes {
			var who []string
			for _, w := range o.Who {
				who = append(who, fmt.Sprintf("%s: %s", w.Name, w.describe()))
			}
			missing := "—"
			if n := o.Missing(); n > 0 {
				missing = fmt.Sprintf("%d of %d", n, o.Count)
			}
			approved := "—"
			if len(o.Approvers) > 0 {
				approved = at(o.Approvers)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", markdown.Cell(strings.Join(o.About, ", ")), markdown.Cell(o.Rule),
				markdown.Cell(strings.Join(who, "; ")), markdown.Cell(approved), missing)
		}
	}
	if len(d.Ignored) > 0 {
		b.WriteString("\nReviews that do not count:\n")
		for _, i := range d.Ignored {
			fmt.Fprintf(&b, "- @%s: %s\n", i.User, i.Reason)
		}
	}
	return b.String()
}

// Summary states the policy's general rules, for the end of a check run.
func (p *Policy) Summary() string {
	var extra []string
	if p.AuthorsApprove {
		extra = append(extra, "the @handles in a SIP's author field may approve changes to it that keep its status")
	}
	if p.IgnoreUpdateMerges {
		extra = append(extra, "merging the base branch into the pull request keeps approvals while what the pull request changes stays the same")
	} else {
		extra = append(extra, "approvals given before the latest change to a SIP or governance file do not count")
	}
	extra = append(extra, "approvals by bots and Apps never count")
	if len(p.Agents.Accounts) > 0 {
		sponsors := "a maintainer"
		if !p.Agents.Sponsors.Empty() {
			sponsors = "a sponsor (" + Approvers{Group: p.Expand(p.Agents.Sponsors)}.describe() + ")"
		}
		extra = append(extra, fmt.Sprintf("the agents %s may author pull requests, which need the approval of %s, a human, and a `%s:` line "+
			"in the description or the head commit's message; an agent's approval never counts", at(p.Agents.Accounts), sponsors, p.Disclosure()))
	}
	if p.AutoMerge {
		extra = append(extra, "an author of a draft SIP editing only that draft (which stays a draft) needs no approval, and the App merges the pull request once every check is green")
	}
	if p.FirstTimeOpenPulls > 0 {
		extra = append(extra, fmt.Sprintf("a first-time contributor may have at most %d open pull requests at once", p.FirstTimeOpenPulls))
	}
	return fmt.Sprintf("\nPolicy (`%s` on the default branch): the pull request's author's own approval does not count; %s; "+
		"a request for changes by a reviewer whose approval would count blocks.\n", Path, strings.Join(extra, "; "))
}

func at(users []string) string {
	out := make([]string, len(users))
	for i, u := range users {
		out[i] = "@" + u
	}
	return strings.Join(out, ", ")
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
