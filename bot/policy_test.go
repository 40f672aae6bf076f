package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int // required approvals
		err      string
	}{
		{"no file", "", 1, ""},
		{"users", "maintainers:\n  users: [ada, bob]\n", 1, ""},
		{"teams and count", "maintainers:\n  teams: [octo/editors]\nrequired_approvals: 2\n", 2, ""},
		{"unknown key", "maintainer:\n  users: [ada]\n", 0, "field maintainer not found"},
		{"typo inside", "maintainers:\n  user: [ada]\n", 0, "field user not found"},
		{"negative", "required_approvals: -1\n", 0, "1 or more"},
		{"team without org", "maintainers:\n  teams: [editors]\n", 0, "org/team-slug"},
		{"not yaml", "maintainers: [\n", 0, "sip.yml"},
		{"admins", "admins:\n  users: [ada]\n  teams: [octo/owners]\n", 1, ""},
		{"admin team without org", "admins:\n  teams: [owners]\n", 0, "org/team-slug"},
		{"admins typo", "admin:\n  users: [ada]\n", 0, "field admin not found"},
		{"wrong type", "required_approvals: two\n", 0, "cannot unmarshal"},
	} {
		p, err := ParsePolicy([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || p.RequiredApprovals != tc.want {
			t.Errorf("%s: %+v, %v", tc.name, p, err)
		}
	}
}

// fakeJudge answers from maps.
type fakeJudge struct {
	maintainers, admins map[string]bool
	stale               map[string]bool // commit → a SIP or governance file changed since
}

func (j fakeJudge) IsMaintainer(user string, _ *Policy) (bool, error) {
	return j.maintainers[user], nil
}
func (j fakeJudge) IsAdmin(user string, _ *Policy) (bool, error) { return j.admins[user], nil }
func (j fakeJudge) ReviewedChangedSince(c string) (bool, error)  { return j.stale[c], nil }

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	j := fakeJudge{maintainers: map[string]bool{"mia": true, "max": true, "author": true}, admins: map[string]bool{"ada": true, "max": true},
		stale: map[string]bool{"old": true}}
	sips, gov, both := Scope{SIPs: true}, Scope{Governance: true}, Scope{SIPs: true, Governance: true}
	one, two := &Policy{RequiredApprovals: 1}, &Policy{RequiredApprovals: 2}
	for _, tc := range []struct {
		name    string
		policy  *Policy
		reviews []Review
		want    Decision
		scope   Scope
	}{
		{"no reviews", one, nil, Decision{State: Pending, Required: 1}, sips},
		{"a maintainer approves", one, []Review{{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Approved, Required: 1, Approvers: []string{"mia"}}, sips},
		{"the author approves their own", one, []Review{{User: "Author", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 1, Ignored: []Ignored{{"Author", "the author's own review does not count"}}}, sips},
		{"a non-maintainer approves", one, []Review{{User: "nia", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 1, Ignored: []Ignored{{"nia", "not a maintainer"}}}, sips},
		{"a bot approves", one, []Review{{User: "helper[bot]", Bot: true, State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 1, Ignored: []Ignored{{"helper[bot]", "bots do not count"}}}, sips},
		{"stale approval", one, []Review{{User: "mia", State: "approved", CommitID: "old", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 1, Ignored: []Ignored{{"mia", staleReason}}}, sips},
		{"a comment after an approval keeps it", one, []Review{
			{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)},
			{User: "mia", State: "commented", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Approved, Required: 1, Approvers: []string{"mia"}}, sips},
		{"a dismissed approval is gone", one, []Review{
			{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)},
			{User: "mia", State: "dismissed", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Pending, Required: 1}, sips},
		{"changes requested block an approval", one, []Review{
			{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)},
			{User: "max", State: "changes_requested", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Blocked, Required: 1, Approvers: []string{"mia"}, Blockers: []string{"max"}}, sips},
		{"the latest review of a reviewer counts", one, []Review{
			{User: "max", State: "approved", CommitID: "head", SubmittedAt: at(3)},
			{User: "max", State: "changes_requested", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Approved, Required: 1, Approvers: []string{"max"}}, sips},
		{"two required, one given", two, []Review{{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 2, Approvers: []string{"mia"}}, sips},
		{"two required, one of them a stranger", two, []Review{
			{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)},
			{User: "MAX", State: "approved", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Pending, Required: 2, Approvers: []string{"mia"}, Ignored: []Ignored{{"MAX", "not a maintainer"}}}, sips},
		// Governance files: an admin's approval, and only that, counts.
		{"policy change approved by a maintainer", one, []Review{{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, AdminRequired: 1, Ignored: []Ignored{{"mia", "not an admin (a governance file changed)"}}}, gov},
		{"policy change approved by an admin", one, []Review{{User: "ada", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Approved, AdminRequired: 1, AdminApprovers: []string{"ada"}}, gov},
		{"policy approval gone stale", one, []Review{{User: "ada", State: "approved", CommitID: "old", SubmittedAt: at(1)}},
			Decision{State: Pending, AdminRequired: 1, Ignored: []Ignored{{"ada", staleReason}}}, gov},
		{"SIPs and policy: a maintainer is not enough", one, []Review{{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 1, Approvers: []string{"mia"}, AdminRequired: 1}, both},
		{"SIPs and policy: one who is both suffices", one, []Review{{User: "max", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Approved, Required: 1, Approvers: []string{"max"}, AdminRequired: 1, AdminApprovers: []string{"max"}}, both},
		{"SIPs and policy: an admin blocks", one, []Review{
			{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)},
			{User: "ada", State: "changes_requested", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Blocked, Required: 1, Approvers: []string{"mia"}, AdminRequired: 1, Blockers: []string{"ada"}}, both},
		{"SIPs and policy: a stranger", one, []Review{{User: "nia", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 1, AdminRequired: 1, Ignored: []Ignored{{"nia", "neither a maintainer nor an admin"}}}, both},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decide(tc.policy, "author", tc.reviews, j, tc.scope)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"", "maintainers:\n  users: [a]\n", "required_approvals: 3\n", "maintainers: {teams: [o/t]}\n", "&a [*a, *a]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err == nil && p.RequiredApprovals < 1 {
			t.Fatalf("accepted %d required approvals", p.RequiredApprovals)
		}
	})
}
