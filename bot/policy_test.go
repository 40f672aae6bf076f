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
	maintainers map[string]bool
	stale       map[string]bool // commit → a SIP file changed since
}

func (j fakeJudge) IsMaintainer(user string, _ *Policy) (bool, error) {
	return j.maintainers[user], nil
}
func (j fakeJudge) SIPsChangedSince(c string) (bool, error) { return j.stale[c], nil }

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	j := fakeJudge{maintainers: map[string]bool{"mia": true, "max": true, "author": true}, stale: map[string]bool{"old": true}}
	one, two := &Policy{RequiredApprovals: 1}, &Policy{RequiredApprovals: 2}
	for _, tc := range []struct {
		name    string
		policy  *Policy
		reviews []Review
		want    Decision
	}{
		{"no reviews", one, nil, Decision{State: Pending, Required: 1}},
		{"a maintainer approves", one, []Review{{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Approved, Required: 1, Approvers: []string{"mia"}}},
		{"the author approves their own", one, []Review{{User: "Author", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 1, Ignored: []Ignored{{"Author", "the author's own review does not count"}}}},
		{"a non-maintainer approves", one, []Review{{User: "nia", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 1, Ignored: []Ignored{{"nia", "not a maintainer"}}}},
		{"a bot approves", one, []Review{{User: "helper[bot]", Bot: true, State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 1, Ignored: []Ignored{{"helper[bot]", "bots do not count"}}}},
		{"stale approval", one, []Review{{User: "mia", State: "approved", CommitID: "old", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 1, Ignored: []Ignored{{"mia", "approved before the latest change to a SIP file"}}}},
		{"a comment after an approval keeps it", one, []Review{
			{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)},
			{User: "mia", State: "commented", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Approved, Required: 1, Approvers: []string{"mia"}}},
		{"a dismissed approval is gone", one, []Review{
			{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)},
			{User: "mia", State: "dismissed", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Pending, Required: 1}},
		{"changes requested block an approval", one, []Review{
			{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)},
			{User: "max", State: "changes_requested", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Blocked, Required: 1, Approvers: []string{"mia"}, Blockers: []string{"max"}}},
		{"the latest review of a reviewer counts", one, []Review{
			{User: "max", State: "approved", CommitID: "head", SubmittedAt: at(3)},
			{User: "max", State: "changes_requested", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Approved, Required: 1, Approvers: []string{"max"}}},
		{"two required, one given", two, []Review{{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Decision{State: Pending, Required: 2, Approvers: []string{"mia"}}},
		{"two required, one of them a stranger", two, []Review{
			{User: "mia", State: "approved", CommitID: "head", SubmittedAt: at(1)},
			{User: "MAX", State: "approved", CommitID: "head", SubmittedAt: at(2)}},
			Decision{State: Pending, Required: 2, Approvers: []string{"mia"}, Ignored: []Ignored{{"MAX", "not a maintainer"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decide(tc.policy, "author", tc.reviews, j)
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
