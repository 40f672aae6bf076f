package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Review is a pull-request review as the policy sees it.
type Review struct {
	User        string
	Bot         bool
	Agent       bool   // an agent's account under the policy
	State       string // approved, changes_requested, commented, dismissed (lower case)
	CommitID    string
	SubmittedAt time.Time
}

// Approval states of a pull request.
const (
	Approved = "approved"
	Pending  = "pending"
	Blocked  = "blocked"
)

// Judge answers the questions the policy needs of GitHub.
type Judge interface {
	// InTeam says whether user is an active member of team (org/slug).
	InTeam(user, team string) (bool, error)
	// HasRole says whether user has one of roles on the repository.
	HasRole(user string, roles ...string) (bool, error)
	// ChangedSince says whether what the review of commit approved has
	// changed by the pull request's head.
	ChangedSince(commit string) (bool, error)
}

// Outcome is a requirement and the approvals that count for it.
type Outcome struct {
	Requirement
	Approvers []string
}

// Missing is how many approvals the requirement still needs.
func (o Outcome) Missing() int { return max(0, o.Count-len(o.Approvers)) }

// Decision is the policy's verdict, with the reasons a person needs.
type Decision struct {
	State    string
	Outcomes []Outcome
	Blockers []string // reviewers who may approve and requested changes
	Ignored  []Ignored
	// Unmet are rules about the pull request itself that no approval
	// satisfies (an agent's missing disclosure, too many open pull
	// requests): any blocks it.
	Unmet []string
}

// Block adds an unmet rule: the decision is blocked.
func (d *Decision) Block(reason string) {
	d.Unmet = append(d.Unmet, reason)
	d.State = Blocked
}

// Ignored is a review that did not count, and why.
type Ignored struct {
	User   string
	Reason string
}

// StaleReason is why an approval of an older commit does not count.
const StaleReason = "approved before the latest change to a SIP or governance file"

// Decide applies requirements to a pull request's reviews. Each
// reviewer's latest approving, change-requesting or dismissed review is
// theirs (a comment changes nothing); the pull request's author's own
// approval and bots' never count, even where the author may otherwise
// approve (as an author of the SIP); an approval of a commit after which
// what it approved changed is stale; a request for changes by anyone who
// may approve a requirement blocks. A reviewer counts towards every
// requirement they may approve.
func Decide(reqs []Requirement, author string, reviews []Review, j Judge) (Decision, error) {
	d := Decision{Outcomes: make([]Outcome, len(reqs))}
	for i, r := range reqs {
		d.Outcomes[i] = Outcome{Requirement: r}
	}
	latest := map[string]Review{}
	sort.SliceStable(reviews, func(a, b int) bool { return reviews[a].SubmittedAt.Before(reviews[b].SubmittedAt) })
	for _, r := range reviews {
		if r.State == "commented" || r.State == "pending" || r.User == "" {
			continue
		}
		latest[strings.ToLower(r.User)] = r
	}
	users := make([]string, 0, len(latest))
	for u := range latest {
		users = append(users, u)
	}
	slices.Sort(users)
	for _, u := range users {
		r := latest[u]
		if r.State == "dismissed" {
			continue
		}
		switch {
		case r.Bot || strings.HasSuffix(r.User, "[bot]"):
			d.Ignored = append(d.Ignored, Ignored{r.User, "bots and Apps do not count"})
			continue
		case r.Agent:
			d.Ignored = append(d.Ignored, Ignored{r.User, "agents' approvals do not count"})
			continue
		case strings.EqualFold(r.User, author):
			d.Ignored = append(d.Ignored, Ignored{r.User, "the pull request's author's own review does not count"})
			continue
		}
		var may []int // the requirements r.User may approve
		for i, req := range reqs {
			ok, err := mayApprove(j, r.User, req)
			if err != nil {
				return d, err
			}
			if ok {
				may = append(may, i)
			}
		}
		if len(may) == 0 {
			d.Ignored = append(d.Ignored, Ignored{r.User, "not among those who may approve (" + strings.Join(allNames(reqs), ", ") + ")"})
			continue
		}
		switch r.State {
		case "changes_requested":
			d.Blockers = append(d.Blockers, r.User)
		case "approved":
			stale, err := j.ChangedSince(r.CommitID)
			if err != nil {
				return d, err
			}
			if stale {
				d.Ignored = append(d.Ignored, Ignored{r.User, StaleReason})
				continue
			}
			for _, i := range may {
				d.Outcomes[i].Approvers = append(d.Outcomes[i].Approvers, r.User)
			}
		}
	}
	d.State = Approved
	for _, o := range d.Outcomes {
		if o.Missing() > 0 {
			d.State = Pending
		}
	}
	if len(d.Blockers) > 0 {
		d.State = Blocked
	}
	return d, nil
}

// mayApprove says whether user is among any of a requirement's approvers.
func mayApprove(j Judge, user string, r Requirement) (bool, error) {
	for _, a := range r.Who {
		ok, err := a.includes(j, user)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

func (a Approvers) includes(j Judge, user string) (bool, error) {
	for _, u := range a.Group.Users {
		if strings.EqualFold(u, user) {
			return true, nil
		}
	}
	for _, t := range a.Group.Teams {
		ok, err := j.InTeam(user, t)
		if ok || err != nil {
			return ok, err
		}
	}
	if len(a.Group.Users)+len(a.Group.Teams) == 0 && len(a.Roles) > 0 {
		return j.HasRole(user, a.Roles...)
	}
	return false, nil
}

func allNames(reqs []Requirement) []string {
	var out []string
	for _, r := range reqs {
		for _, n := range r.WhoNames() {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// Overriders names who may override the policy: its admins.
func (p *Policy) Overriders() Approvers { return p.admins() }

// MayOverride says whether user may override the policy (let a pull
// request or a commit through without what it requires, on record with a
// reason). Bots never may.
func (p *Policy) MayOverride(j Judge, user string, bot bool) (bool, error) {
	if bot || user == "" || strings.HasSuffix(user, "[bot]") {
		return false, nil
	}
	return p.admins().includes(j, user)
}

// Describe lists an approver set's members for people.
func (a Approvers) Describe() string { return a.describe() }

// MissingLines says what a decision still needs, one line per
// requirement, each naming who can satisfy it.
func (d Decision) MissingLines() []string {
	out := append([]string(nil), d.Unmet...)
	if len(d.Blockers) > 0 {
		out = append(out, "changes requested by "+at(d.Blockers)+": their review blocks until they approve or it is dismissed")
	}
	for _, o := range d.Outcomes {
		n := o.Missing()
		if n == 0 {
			continue
		}
		var who []string
		for _, w := range o.Who {
			who = append(who, w.Name+" ("+w.describe()+")")
		}
		noun := "approvals"
		if n == 1 {
			noun = "approval"
		}
		out = append(out, fmt.Sprintf("%d %s for %s (%s) from %s", n, noun, o.Rule, strings.Join(o.About, ", "), strings.Join(who, " or ")))
	}
	return out
}
