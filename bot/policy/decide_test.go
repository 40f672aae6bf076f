package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sipregistry/sip/registry"
)

// fakeJudge answers from maps.
type fakeJudge struct {
	teams map[string][]string // team → members
	roles map[string]string   // login → repository role
	stale map[string]bool     // commit → what it approved changed since
}

func (j fakeJudge) InTeam(user, team string) (bool, error) {
	for _, m := range j.teams[team] {
		if m == user {
			return true, nil
		}
	}
	return false, nil
}

func (j fakeJudge) HasRole(user string, roles ...string) (bool, error) {
	for _, r := range roles {
		if j.roles[user] == r {
			return true, nil
		}
	}
	return false, nil
}

func (j fakeJudge) ChangedSince(c string) (bool, error) { return j.stale[c], nil }

func mustParse(t *testing.T, src string) *Policy {
	t.Helper()
	p, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// outcomes is a decision in a shape that is short to write: per
// requirement, its rule and who approved it.
type outcome struct {
	Rule      string
	About     []string
	Count     int
	Approvers []string
}

func short(d Decision) (string, []outcome, []string, []Ignored) {
	var out []outcome
	for _, o := range d.Outcomes {
		out = append(out, outcome{o.Rule, o.About, o.Count, o.Approvers})
	}
	return d.State, out, d.Blockers, d.Ignored
}

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	approve := func(user string, m int) Review {
		return Review{User: user, State: "approved", CommitID: "head", SubmittedAt: at(m)}
	}
	j := fakeJudge{teams: map[string][]string{"octo/editors": {"mia", "max", "author"}, "octo/safety": {"sam"}},
		roles: map[string]string{"ada": "admin", "max": "admin"}, stale: map[string]bool{"old": true}}
	base := "maintainers:\n  teams: [octo/editors]\n"
	one := mustParse(t, base)
	two := mustParse(t, base+"required_approvals: 2\n")
	full := mustParse(t, base+`aliases:
  safety-leads: {users: [lea]}
modules:
  safety:
    owners: {teams: [octo/safety], aliases: [safety-leads]}
authors_approve: true
transitions:
  - {from: draft, to: active, approvals: 2, by: maintainers}
  - {to: deprecated, approvals: 1, by: admins}
`)
	ownersActivate := mustParse(t, base+`modules:
  safety:
    owners: {teams: [octo/safety]}
transitions:
  - {from: draft, to: active, by: owners}
`)
	move := func(from, to string) Change {
		return Change{SIPs: []SIPChange{{Path: "evaluations/SIP-12.md", Number: 12,
			Before: &State{Module: "core", Status: from}, After: &State{Module: "safety", Status: to}}}}
	}
	deleted := func(status string) Change {
		return Change{SIPs: []SIPChange{{Path: "evaluations/SIP-12.md", Number: 12, Before: &State{Module: "core", Status: status}}}}
	}
	edit := func(module, from, to string, authors ...string) Change {
		return Change{SIPs: []SIPChange{{Path: "evaluations/SIP-12.md", Number: 12,
			Before: &State{Module: module, Status: from, Authors: authors}, After: &State{Module: module, Status: to, Authors: authors}}}}
	}
	sips := edit("core", "draft", "draft")
	gov := Change{Governance: []string{Path}}
	both := Change{SIPs: sips.SIPs, Governance: gov.Governance}
	sipRule := []outcome{{"a SIP changed", []string{"SIP-12"}, 1, nil}}
	with := func(o []outcome, approvers ...string) []outcome {
		out := append([]outcome(nil), o...)
		out[0].Approvers = approvers
		return out
	}
	govRule := outcome{"a governance file", []string{Path}, 1, nil}
	for _, tc := range []struct {
		name     string
		policy   *Policy
		change   Change
		reviews  []Review
		state    string
		outcomes []outcome
		blockers []string
		ignored  []Ignored
	}{
		{"no reviews", one, sips, nil, Pending, sipRule, nil, nil},
		{"a maintainer approves", one, sips, []Review{approve("mia", 1)}, Approved, with(sipRule, "mia"), nil, nil},
		{"the author approves their own", one, sips, []Review{approve("Author", 1)}, Pending, sipRule, nil,
			[]Ignored{{"Author", "the pull request's author's own review does not count"}}},
		{"a non-maintainer approves", one, sips, []Review{approve("nia", 1)}, Pending, sipRule, nil,
			[]Ignored{{"nia", "not among those who may approve (maintainers)"}}},
		{"a bot approves", one, sips, []Review{{User: "helper[bot]", Bot: true, State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Pending, sipRule, nil, []Ignored{{"helper[bot]", "bots and Apps do not count"}}},
		{"an App's approval without the bot flag", one, sips, []Review{approve("renovate[bot]", 1)},
			Pending, sipRule, nil, []Ignored{{"renovate[bot]", "bots and Apps do not count"}}},
		{"an agent's approval", one, sips, []Review{{User: "mia", Agent: true, State: "approved", CommitID: "head", SubmittedAt: at(1)}},
			Pending, sipRule, nil, []Ignored{{"mia", "agents' approvals do not count"}}},
		{"stale approval", one, sips, []Review{{User: "mia", State: "approved", CommitID: "old", SubmittedAt: at(1)}},
			Pending, sipRule, nil, []Ignored{{"mia", StaleReason}}},
		{"a comment after an approval keeps it", one, sips, []Review{approve("mia", 1),
			{User: "mia", State: "commented", CommitID: "head", SubmittedAt: at(2)}}, Approved, with(sipRule, "mia"), nil, nil},
		{"a dismissed approval is gone", one, sips, []Review{approve("mia", 1),
			{User: "mia", State: "dismissed", CommitID: "head", SubmittedAt: at(2)}}, Pending, sipRule, nil, nil},
		{"changes requested block an approval", one, sips, []Review{approve("mia", 1),
			{User: "max", State: "changes_requested", CommitID: "head", SubmittedAt: at(2)}}, Blocked, with(sipRule, "mia"), []string{"max"}, nil},
		{"the latest review of a reviewer counts", one, sips, []Review{approve("max", 3),
			{User: "max", State: "changes_requested", CommitID: "head", SubmittedAt: at(2)}}, Approved, with(sipRule, "max"), nil, nil},
		{"two required, one given", two, sips, []Review{approve("mia", 1)}, Pending,
			[]outcome{{"a SIP changed", []string{"SIP-12"}, 2, []string{"mia"}}}, nil, nil},
		// Governance files: an admin's approval, and only that, counts.
		{"policy change approved by a maintainer", one, gov, []Review{approve("mia", 1)}, Pending, []outcome{govRule}, nil,
			[]Ignored{{"mia", "not among those who may approve (admins)"}}},
		{"policy change approved by an admin", one, gov, []Review{approve("ada", 1)}, Approved, with([]outcome{govRule}, "ada"), nil, nil},
		{"SIPs and policy: a maintainer is not enough", one, both, []Review{approve("mia", 1)}, Pending,
			[]outcome{with(sipRule, "mia")[0], govRule}, nil, nil},
		{"SIPs and policy: one who is both suffices", one, both, []Review{approve("max", 1)}, Approved,
			[]outcome{with(sipRule, "max")[0], with([]outcome{govRule}, "max")[0]}, nil, nil},
		{"SIPs and policy: an admin blocks", one, both, []Review{approve("mia", 1),
			{User: "ada", State: "changes_requested", CommitID: "head", SubmittedAt: at(2)}}, Blocked,
			[]outcome{with(sipRule, "mia")[0], govRule}, []string{"ada"}, nil},
		// Module owners approve their module's SIPs; maintainers still can.
		{"a module owner approves", full, edit("safety", "draft", "draft"), []Review{approve("sam", 1)}, Approved,
			[]outcome{{"a SIP changed in module safety", []string{"SIP-12"}, 1, []string{"sam"}}}, nil, nil},
		{"an owner by alias approves", full, edit("safety", "draft", "draft"), []Review{approve("lea", 1)}, Approved,
			[]outcome{{"a SIP changed in module safety", []string{"SIP-12"}, 1, []string{"lea"}}}, nil, nil},
		{"an owner of another module does not", full, edit("core", "draft", "draft"), []Review{approve("sam", 1)}, Pending,
			[]outcome{{"a SIP changed", []string{"SIP-12"}, 1, nil}}, nil, []Ignored{{"sam", "not among those who may approve (maintainers)"}}},
		// Authors approve edits that keep the status; never their own pull request.
		{"an author approves an edit", full, edit("core", "active", "active", "jim", "joshua"), []Review{approve("joshua", 1)}, Approved,
			[]outcome{{"a SIP changed (status kept: its authors may approve)", []string{"SIP-12"}, 1, []string{"joshua"}}}, nil, nil},
		{"an author who opened the pull request does not", full, edit("core", "active", "active", "author"), []Review{approve("author", 1)}, Pending,
			[]outcome{{"a SIP changed (status kept: its authors may approve)", []string{"SIP-12"}, 1, nil}}, nil,
			[]Ignored{{"author", "the pull request's author's own review does not count"}}},
		{"an author cannot activate", full, edit("core", "draft", "active", "jim"), []Review{approve("jim", 1), approve("mia", 2)}, Pending,
			[]outcome{{"status draft → active", []string{"SIP-12"}, 2, []string{"mia"}}}, nil,
			[]Ignored{{"jim", "not among those who may approve (maintainers)"}}},
		// Transitions: activation needs two maintainers, deprecation an admin.
		{"activation with two maintainers", full, edit("core", "draft", "active"), []Review{approve("mia", 1), approve("max", 2)}, Approved,
			[]outcome{{"status draft → active", []string{"SIP-12"}, 2, []string{"max", "mia"}}}, nil, nil},
		{"a module owner cannot activate", full, edit("safety", "draft", "active"), []Review{approve("sam", 1), approve("mia", 2)}, Pending,
			[]outcome{{"status draft → active", []string{"SIP-12"}, 2, []string{"mia"}}}, nil,
			[]Ignored{{"sam", "not among those who may approve (maintainers)"}}},
		{"a new active SIP is an activation", full, Change{SIPs: []SIPChange{{Path: "evaluations/SIP-13.md", Number: 13,
			After: &State{Module: "core", Status: "active"}}}}, []Review{approve("mia", 1)}, Pending,
			[]outcome{{"status (new) → active", []string{"SIP-13"}, 2, []string{"mia"}}}, nil, nil},
		{"deprecation by an admin", full, edit("core", "active", "deprecated"), []Review{approve("ada", 1)}, Approved,
			[]outcome{{"status active → deprecated", []string{"SIP-12"}, 1, []string{"ada"}}}, nil, nil},
		{"moving a SIP between modules needs both modules' say", full, move("draft", "draft"),
			[]Review{approve("sam", 1)}, Pending, []outcome{
				{"a SIP moved out of module core (to safety)", []string{"SIP-12"}, 1, nil},
				{"a SIP moved into module safety (from core)", []string{"SIP-12"}, 1, []string{"sam"}}}, nil, nil},
		{"a maintainer moves a SIP alone", full, move("draft", "draft"), []Review{approve("mia", 1)}, Approved, []outcome{
			{"a SIP moved out of module core (to safety)", []string{"SIP-12"}, 1, []string{"mia"}},
			{"a SIP moved into module safety (from core)", []string{"SIP-12"}, 1, []string{"mia"}}}, nil, nil},
		// A move plus a status change needs what each part needs: the new
		// module's owner, whom the transition names, cannot take the SIP
		// over alone.
		{"move plus activation by the new module's owner", ownersActivate, move("draft", "active"), []Review{approve("sam", 1)}, Pending, []outcome{
			{"status draft → active", []string{"SIP-12"}, 1, []string{"sam"}},
			{"a SIP moved out of module core (to safety)", []string{"SIP-12"}, 1, nil},
			{"a SIP moved into module safety (from core)", []string{"SIP-12"}, 1, []string{"sam"}}}, nil, nil},
		{"move plus activation with a maintainer too", ownersActivate, move("draft", "active"), []Review{approve("sam", 1), approve("mia", 2)}, Approved, []outcome{
			{"status draft → active", []string{"SIP-12"}, 1, []string{"sam"}},
			{"a SIP moved out of module core (to safety)", []string{"SIP-12"}, 1, []string{"mia"}},
			{"a SIP moved into module safety (from core)", []string{"SIP-12"}, 1, []string{"mia", "sam"}}}, nil, nil},
		// Deleting is deprecating: it needs the deprecation rule's approvers
		// as well as the maintainers.
		{"deleting an active SIP with a maintainer", full, deleted("active"), []Review{approve("mia", 1)}, Pending, []outcome{
			{"a SIP deleted", []string{"SIP-12"}, 1, []string{"mia"}},
			{"a SIP deleted (the registry deprecates it): status active → deprecated", []string{"SIP-12"}, 1, nil}}, nil, nil},
		{"deleting an active SIP with an admin and a maintainer", full, deleted("active"), []Review{approve("mia", 1), approve("ada", 2)}, Approved, []outcome{
			{"a SIP deleted", []string{"SIP-12"}, 1, []string{"mia"}},
			{"a SIP deleted (the registry deprecates it): status active → deprecated", []string{"SIP-12"}, 1, []string{"ada"}}}, nil, nil},
		{"deleting a draft SIP is deprecating it too", full, deleted("draft"), []Review{approve("mia", 1)}, Pending, []outcome{
			{"a SIP deleted", []string{"SIP-12"}, 1, []string{"mia"}},
			{"a SIP deleted (the registry deprecates it): status draft → deprecated", []string{"SIP-12"}, 1, nil}}, nil, nil},
		{"deleting a deprecated SIP needs the maintainers only", full, deleted("deprecated"), []Review{approve("mia", 1)}, Approved, []outcome{
			{"a SIP deleted", []string{"SIP-12"}, 1, []string{"mia"}}}, nil, nil},
		{"deleting without a deprecation rule needs the maintainers", one, deleted("active"), []Review{approve("mia", 1)}, Approved, []outcome{
			{"a SIP deleted", []string{"SIP-12"}, 1, []string{"mia"}}}, nil, nil},
		// A rename is a deletion and an addition: the old path's
		// deprecation rule applies, and the new file's status.
		{"rename plus edit", full, Change{SIPs: []SIPChange{
			{Path: "evaluations/SIP-12.md", Number: 12, Before: &State{Module: "safety", Status: "active"}},
			{Path: "evaluations/SIP-13.md", Number: 12, After: &State{Module: "safety", Status: "active"}}}},
			[]Review{approve("sam", 1)}, Pending, []outcome{
				{"a SIP deleted", []string{"SIP-12"}, 1, nil},
				{"a SIP deleted (the registry deprecates it): status active → deprecated", []string{"SIP-12"}, 1, nil},
				{"status (new) → active", []string{"SIP-12"}, 2, nil}}, nil, []Ignored{{"sam", "not among those who may approve (maintainers, admins)"}}},
		{"no change, nothing needed", one, Change{}, nil, Approved, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(tc.policy.Requirements(tc.change), "author", tc.reviews, j)
			if err != nil {
				t.Fatal(err)
			}
			state, outcomes, blockers, ignored := short(d)
			if state != tc.state {
				t.Errorf("state = %s, want %s", state, tc.state)
			}
			if diff := cmp.Diff(tc.outcomes, outcomes); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.blockers, blockers); diff != "" {
				t.Errorf("blockers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.ignored, ignored); diff != "" {
				t.Errorf("ignored (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequirementsGroupSIPsUnderOneRule(t *testing.T) {
	p := mustParse(t, "")
	c := Change{SIPs: []SIPChange{
		{Path: "evaluations/SIP-3.md", Number: 3, Before: &State{Module: "core", Status: "draft"}, After: &State{Module: "core", Status: "draft"}},
		{Path: "evaluations/SIP-4.md", Number: 4, Before: &State{Module: "core", Status: "draft"}, After: &State{Module: "core", Status: "draft"}},
	}, Other: []string{"evaluations/notes.md"}}
	got := p.Requirements(c)
	if len(got) != 2 || !cmp.Equal(got[0].About, []string{"SIP-3", "SIP-4"}) || got[1].About[0] != "evaluations/notes.md" {
		t.Errorf("requirements = %+v, want SIP-3 and SIP-4 under one rule and the other file under another", got)
	}
	if got[0].Who[0].Roles == nil {
		t.Errorf("without maintainers listed, the repository's roles stand in: %+v", got[0].Who[0])
	}
}

func TestHandles(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"SafeMolt Team", nil},
		{"Ada Lovelace (@ada), Grace Hopper (@grace-h)", []string{"ada", "grace-h"}},
		{"@ada, @Ada", []string{"ada"}},
		{"ada@example.com", nil},
		{"@-bad, @ok", []string{"ok"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := registry.Handles(tc.in); !cmp.Equal(got, tc.want) {
				t.Errorf("Handles(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestAgentRules: an agent's pull request needs a human sponsor besides
// what its change needs; the disclosure trailer is found in either text.
func TestAgentRules(t *testing.T) {
	p := mustParse(t, "maintainers:\n  teams: [octo/editors]\nagents:\n  accounts: [devin-bot, Copilot]\n  sponsors: {users: [sam]}\n")
	j := fakeJudge{teams: map[string][]string{"octo/editors": {"mia"}}}
	if !p.IsAgent("copilot") || p.IsAgent("mia") {
		t.Errorf("IsAgent: copilot %v, mia %v", p.IsAgent("copilot"), p.IsAgent("mia"))
	}
	reqs := append(p.Requirements(Change{SIPs: []SIPChange{{Path: "evaluations/SIP-3.md", Number: 3,
		Before: &State{Module: "core", Status: "draft"}, After: &State{Module: "core", Status: "draft"}}}}), p.AuthorRequirements("devin-bot")...)
	for _, tc := range []struct {
		name    string
		reviews []string
		want    string
	}{
		{"a maintainer alone", []string{"mia"}, Pending},
		{"the sponsor alone", []string{"sam"}, Pending},
		{"a maintainer and the sponsor", []string{"mia", "sam"}, Approved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rs []Review
			for _, u := range tc.reviews {
				rs = append(rs, Review{User: u, State: "approved", CommitID: "head"})
			}
			d, err := Decide(reqs, "devin-bot", rs, j)
			if err != nil || d.State != tc.want {
				t.Errorf("state = %s, %v; want %s (%+v)", d.State, err, tc.want, d.Outcomes)
			}
		})
	}
	if got := p.AuthorRequirements("mia"); got != nil {
		t.Errorf("a human's pull request: %+v, want none", got)
	}
	if p.Disclosure() != DefaultDisclosure {
		t.Errorf("disclosure = %q", p.Disclosure())
	}
	for _, tc := range []struct {
		texts []string
		want  bool
	}{
		{[]string{"Adds SIP-3.\n\nAssisted-by: Devin (model x)"}, true},
		{[]string{"", "fix\n\nassisted-by:  Claude"}, true},
		{[]string{"Assisted-by:"}, false},
		{[]string{"I was assisted by nobody"}, false},
	} {
		t.Run(strings.Join(tc.texts, " / "), func(t *testing.T) {
			if got := Discloses(p.Disclosure(), tc.texts...); got != tc.want {
				t.Errorf("Discloses(%q) = %v, want %v", tc.texts, got, tc.want)
			}
		})
	}
	d := Decision{State: Approved}
	d.Block("no disclosure")
	if d.State != Blocked || d.Title() != "Blocked: no disclosure" || d.MissingLines()[0] != "no disclosure" {
		t.Errorf("blocked decision: %+v %q", d, d.Title())
	}
}

func TestSafeEdit(t *testing.T) {
	p := mustParse(t, "auto_merge: true\nagents: {accounts: [bot-writer]}\n")
	draft := func(before, after *State) Change {
		return Change{SIPs: []SIPChange{{Path: "evaluations/SIP-3.md", Number: 3, Before: before, After: after}}}
	}
	mine := &State{Module: "core", Status: "draft", Authors: []string{"ada", "bot-writer"}}
	for _, tc := range []struct {
		name   string
		policy *Policy
		change Change
		author string
		want   bool
	}{
		{"an author edits their draft", p, draft(mine, mine), "Ada", true},
		{"without auto_merge", mustParse(t, ""), draft(mine, mine), "ada", false},
		{"someone else edits it", p, draft(mine, mine), "eve", false},
		{"an author activates it", p, draft(mine, &State{Module: "core", Status: "active"}), "ada", false},
		{"an author moves it", p, draft(mine, &State{Module: "safety", Status: "draft"}), "ada", false},
		{"an author edits an active SIP", p, draft(&State{Module: "core", Status: "active", Authors: []string{"ada"}}, &State{Module: "core", Status: "active"}), "ada", false},
		{"an author deletes it", p, draft(mine, nil), "ada", false},
		{"a new draft", p, draft(nil, mine), "ada", false},
		{"and the policy too", p, Change{SIPs: draft(mine, mine).SIPs, Governance: []string{Path}}, "ada", false},
		{"and another file", p, Change{SIPs: draft(mine, mine).SIPs, Other: []string{"evaluations/x.md"}}, "ada", false},
		{"an agent among the authors", p, draft(mine, mine), "bot-writer", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.policy.SafeEdit(tc.change, tc.author); got != tc.want {
				t.Errorf("SafeEdit = %v, want %v", got, tc.want)
			}
		})
	}
}
