package policy

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int    // required approvals
		err      string // what the error says, line first
	}{
		{"no file", "", 1, ""},
		{"users", "maintainers:\n  users: [ada, bob]\n", 1, ""},
		{"users with @", "maintainers:\n  users: ['@ada']\n", 1, ""},
		{"teams and count", "maintainers:\n  teams: [octo/editors]\nrequired_approvals: 2\n", 2, ""},
		{"unknown key", "maintainer:\n  users: [ada]\n", 0, ".github/sip.yml:1: field maintainer not found (unknown key); did you mean maintainers?"},
		{"typo inside", "maintainers:\n  user: [ada]\n", 0, ":2: field user not found"},
		{"negative", "required_approvals: -1\n", 0, ":1: required_approvals must be 1 or more"},
		{"team without org", "maintainers:\n  teams: [editors]\n", 0, ":2: team \"editors\": write it as org/team-slug"},
		{"agents", "agents:\n  accounts: [devin-ai, 'copilot[bot]']\n  sponsors: {teams: [octo/editors]}\n  disclosure: Co-authored-by\nfirst_time_open_pulls: 2\n", 1, ""},
		{"agent not a login", "agents:\n  accounts: [two words]\n", 0, ":2: agent \"two words\" is not a GitHub login"},
		{"disclosure not a trailer", "agents:\n  disclosure: 'AI: yes'\n", 0, ":2: disclosure \"AI: yes\" is not a trailer name"},
		{"negative open pull limit", "first_time_open_pulls: -1\n", 0, ":1: first_time_open_pulls must be 0"},
		{"not yaml", "maintainers: [\n", 0, "sip.yml"},
		{"admins", "admins:\n  users: [ada]\n  teams: [octo/owners]\n", 1, ""},
		{"admin team without org", "admins:\n  teams: [owners]\n", 0, "org/team-slug"},
		{"wrong type", "required_approvals: two\n", 0, ":1: cannot unmarshal"},
		{"not a login", "maintainers:\n  users: [ada, 'not a login']\n", 0, ":2: user \"not a login\" is not a GitHub login"},
		{"everything", `maintainers: {teams: [octo/editors]}
aliases:
  leads: {users: [lea]}
  safety: {teams: [octo/safety], aliases: [leads]}
modules:
  safety: {owners: {aliases: [safety]}, required_approvals: 2}
authors_approve: true
transitions:
  - {from: draft, to: active, approvals: 2, by: maintainers}
  - {to: deprecated, by: [admins, leads]}
ignore_update_merges: true
rules: {body-sections: warning, answer-key-public: off}
sections: {process: [Motivation]}
`, 1, ""},
		{"transition to an unknown status", "transitions:\n  - from: draft\n    to: final\n    by: maintainers\n", 0,
			":3: transition to \"final\" is not a status (draft, active, deprecated)"},
		{"transition from an unknown status", "transitions:\n  - {from: review, to: active, by: maintainers}\n", 0, ":2: transition from \"review\""},
		{"transition by nobody known", "transitions:\n  - {to: active, by: editors}\n", 0, ":2: by \"editors\" is not maintainers, admins, owners or an alias"},
		{"transition by nobody", "transitions:\n  - {to: active}\n", 0, "says nobody in by"},
		{"a cycle of aliases", "aliases:\n  a: {aliases: [b]}\n  b: {aliases: [c]}\n  c: {aliases: [a]}\n", 0, ":2: aliases include each other in a cycle: a → b → c → a"},
		{"an alias including itself", "aliases:\n  a: {users: [x], aliases: [a]}\n", 0, "cycle: a → a"},
		{"an undefined alias", "aliases:\n  leads: {users: [x]}\nmaintainers: {aliases: [lead]}\n", 0, ":3: alias \"lead\" is not defined under aliases; did you mean leads?"},
		{"a module without owners", "modules:\n  safety: {required_approvals: 2}\n", 0, ":2: module \"safety\" names no owners"},
		{"an unknown rule", "rules:\n  body-section: warning\n", 0, ":2: rules: \"body-section\" is not a rule of `sip validate --list-rules`; did you mean body-sections?"},
		{"an unknown severity", "rules:\n  body-sections: warn\n", 0, ":2: rules: body-sections: \"warn\" is not a severity"},
		{"sections of an unknown type", "sections:\n  essay: [Intro]\n", 0, ":2: sections: \"essay\" is not a SIP type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.RequiredApprovals != tc.want {
				t.Errorf("required approvals = %d, want %d", p.RequiredApprovals, tc.want)
			}
		})
	}
}

func TestExpandFollowsAliasesOnce(t *testing.T) {
	p := mustParse(t, "aliases:\n  a: {users: [x, y], aliases: [b]}\n  b: {users: [Y, z], teams: [o/t]}\n")
	g := p.Expand(Group{Aliases: []string{"a", "b"}})
	if strings.Join(g.Users, ",") != "x,y,z" || strings.Join(g.Teams, ",") != "o/t" {
		t.Errorf("Expand = %+v, want users x, y, z and team o/t", g)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "maintainers:\n  users: [a]\n", "required_approvals: 3\n", "maintainers: {teams: [o/t]}\n", "&a [*a, *a]",
		"aliases: {a: {aliases: [b]}, b: {aliases: [a]}}\n", "transitions: [{to: active, by: maintainers}]\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		if p.RequiredApprovals < 1 {
			t.Fatalf("accepted %d required approvals", p.RequiredApprovals)
		}
		for _, tr := range p.Transitions {
			if tr.Approvals < 1 || len(tr.By) == 0 {
				t.Fatalf("accepted transition %+v", tr)
			}
		}
		for name := range p.Aliases {
			if p.aliasCycle(name) != nil {
				t.Fatalf("accepted a cycle through %s", name)
			}
		}
	})
}
