package bot

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// PolicyPath is where a repository keeps its approval policy, read from
// the default branch only: a pull request cannot change its own policy.
const PolicyPath = ".github/sip.yml"

// Policy is a repository's approval policy for SIP pull requests.
// Without maintainers (no file, or none listed), the repository's admins
// and maintainers (by their role on it) are the maintainers.
type Policy struct {
	Maintainers struct {
		// Users are GitHub logins.
		Users []string `yaml:"users"`
		// Teams are "org/team-slug"; only active members count.
		Teams []string `yaml:"teams"`
	} `yaml:"maintainers"`
	// RequiredApprovals is how many maintainers must approve (default 1).
	RequiredApprovals int `yaml:"required_approvals"`
}

// ParsePolicy reads .github/sip.yml strictly: an unknown key is an error
// that names it, so a typo cannot silently weaken the policy.
func ParsePolicy(data []byte) (*Policy, error) {
	p := &Policy{}
	if len(bytes.TrimSpace(data)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(p); err != nil {
			return nil, fmt.Errorf("%s: %w", PolicyPath, err)
		}
	}
	if p.RequiredApprovals == 0 {
		p.RequiredApprovals = 1
	}
	if p.RequiredApprovals < 0 {
		return nil, fmt.Errorf("%s: required_approvals must be 1 or more, not %d", PolicyPath, p.RequiredApprovals)
	}
	for _, t := range p.Maintainers.Teams {
		if org, slug, ok := strings.Cut(t, "/"); !ok || org == "" || slug == "" || strings.Contains(slug, "/") {
			return nil, fmt.Errorf("%s: team %q: write it as org/team-slug", PolicyPath, t)
		}
	}
	return p, nil
}

// Review is a pull-request review as the policy sees it.
type Review struct {
	User        string
	Bot         bool
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

// Decision is the policy's verdict, with the reasons a person needs.
type Decision struct {
	State     string
	Required  int
	Approvers []string // maintainers whose approval counts
	Blockers  []string // maintainers who requested changes
	Ignored   []Ignored
}

// Ignored is a review that did not count, and why.
type Ignored struct {
	User   string
	Reason string
}

// Judge answers the questions the policy needs of GitHub.
type Judge interface {
	// IsMaintainer says whether user is a maintainer under p.
	IsMaintainer(user string, p *Policy) (bool, error)
	// SIPsChangedSince says whether a SIP file changed between commit and
	// the pull request's head.
	SIPsChangedSince(commit string) (bool, error)
}

// Decide applies a policy to a pull request's reviews. Each reviewer's
// latest approving, change-requesting or dismissed review is theirs (a
// comment changes nothing); the author's own approval and bots' never
// count; an approval of a commit after which a SIP file changed is stale;
// a maintainer's request for changes blocks.
func Decide(p *Policy, author string, reviews []Review, j Judge) (Decision, error) {
	d := Decision{Required: p.RequiredApprovals}
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
		case r.Bot:
			d.Ignored = append(d.Ignored, Ignored{r.User, "bots do not count"})
			continue
		case strings.EqualFold(r.User, author):
			d.Ignored = append(d.Ignored, Ignored{r.User, "the author's own review does not count"})
			continue
		}
		ok, err := j.IsMaintainer(r.User, p)
		if err != nil {
			return d, err
		}
		if !ok {
			d.Ignored = append(d.Ignored, Ignored{r.User, "not a maintainer"})
			continue
		}
		switch r.State {
		case "changes_requested":
			d.Blockers = append(d.Blockers, r.User)
		case "approved":
			stale, err := j.SIPsChangedSince(r.CommitID)
			if err != nil {
				return d, err
			}
			if stale {
				d.Ignored = append(d.Ignored, Ignored{r.User, "approved before the latest change to a SIP file"})
				continue
			}
			d.Approvers = append(d.Approvers, r.User)
		}
	}
	switch {
	case len(d.Blockers) > 0:
		d.State = Blocked
	case len(d.Approvers) >= d.Required:
		d.State = Approved
	default:
		d.State = Pending
	}
	return d, nil
}
