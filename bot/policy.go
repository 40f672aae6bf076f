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

// GovernanceFiles are the files that govern the App itself: a pull request
// that adds, edits, renames or deletes one needs an admin's approval.
var GovernanceFiles = []string{PolicyPath}

// IsGovernance reports whether a repository path is a governance file.
func IsGovernance(name string) bool { return slices.Contains(GovernanceFiles, name) }

// Group is a set of people: GitHub logins and teams.
type Group struct {
	// Users are GitHub logins.
	Users []string `yaml:"users"`
	// Teams are "org/team-slug"; only active members count.
	Teams []string `yaml:"teams"`
}

func (g Group) empty() bool { return len(g.Users)+len(g.Teams) == 0 }

// Policy is a repository's approval policy for SIP pull requests.
// Without maintainers (no file, or none listed), the repository's admins
// and maintainers (by their role on it) are the maintainers; without
// admins, the repository's admins are.
type Policy struct {
	Maintainers Group `yaml:"maintainers"`
	// Admins approve changes to the governance files (GovernanceFiles),
	// one approval being enough; maintainers alone cannot.
	Admins Group `yaml:"admins"`
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
	for _, t := range slices.Concat(p.Maintainers.Teams, p.Admins.Teams) {
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

// Scope is what a pull request changes that the policy governs.
type Scope struct {
	SIPs       bool // SIP files (anything validation or sync reads)
	Governance bool // governance files (GovernanceFiles)
}

// Decision is the policy's verdict, with the reasons a person needs.
type Decision struct {
	State     string
	Required  int      // maintainer approvals needed (0 when no SIP changed)
	Approvers []string // maintainers whose approval counts
	// AdminRequired is 1 when a governance file changed; AdminApprovers
	// are the admins whose approval counts.
	AdminRequired  int
	AdminApprovers []string
	Blockers       []string // maintainers or admins who requested changes
	Ignored        []Ignored
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
	// IsAdmin says whether user is an admin under p.
	IsAdmin(user string, p *Policy) (bool, error)
	// ReviewedChangedSince says whether a SIP file or a governance file
	// changed between commit and the pull request's head.
	ReviewedChangedSince(commit string) (bool, error)
}

// staleReason is why an approval of an older commit does not count.
const staleReason = "approved before the latest change to a SIP or governance file"

// Decide applies a policy to a pull request's reviews. Each reviewer's
// latest approving, change-requesting or dismissed review is theirs (a
// comment changes nothing); the author's own approval and bots' never
// count; an approval of a commit after which a SIP or governance file
// changed is stale; a request for changes by anyone whose approval would
// count blocks. A change to SIPs needs RequiredApprovals maintainers; a
// change to a governance file needs an admin; a change to both needs both.
func Decide(p *Policy, author string, reviews []Review, j Judge, scope Scope) (Decision, error) {
	d := Decision{}
	if scope.SIPs {
		d.Required = p.RequiredApprovals
	}
	if scope.Governance {
		d.AdminRequired = 1
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
		case r.Bot:
			d.Ignored = append(d.Ignored, Ignored{r.User, "bots do not count"})
			continue
		case strings.EqualFold(r.User, author):
			d.Ignored = append(d.Ignored, Ignored{r.User, "the author's own review does not count"})
			continue
		}
		var maintainer, admin bool
		var err error
		if scope.SIPs {
			if maintainer, err = j.IsMaintainer(r.User, p); err != nil {
				return d, err
			}
		}
		if scope.Governance {
			if admin, err = j.IsAdmin(r.User, p); err != nil {
				return d, err
			}
		}
		if !maintainer && !admin {
			d.Ignored = append(d.Ignored, Ignored{r.User, notCounted(scope)})
			continue
		}
		switch r.State {
		case "changes_requested":
			d.Blockers = append(d.Blockers, r.User)
		case "approved":
			stale, err := j.ReviewedChangedSince(r.CommitID)
			if err != nil {
				return d, err
			}
			if stale {
				d.Ignored = append(d.Ignored, Ignored{r.User, staleReason})
				continue
			}
			if maintainer {
				d.Approvers = append(d.Approvers, r.User)
			}
			if admin {
				d.AdminApprovers = append(d.AdminApprovers, r.User)
			}
		}
	}
	switch {
	case len(d.Blockers) > 0:
		d.State = Blocked
	case len(d.Approvers) >= d.Required && len(d.AdminApprovers) >= d.AdminRequired:
		d.State = Approved
	default:
		d.State = Pending
	}
	return d, nil
}

// notCounted says why a reviewer's review does not count under scope.
func notCounted(scope Scope) string {
	switch {
	case scope.SIPs && scope.Governance:
		return "neither a maintainer nor an admin"
	case scope.Governance:
		return "not an admin (a governance file changed)"
	}
	return "not a maintainer"
}
