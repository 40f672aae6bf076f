package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/sipregistry/sip/registry"
)

// keys are every key the policy language has, for "did you mean".
var keys = []string{"maintainers", "admins", "required_approvals", "aliases", "modules", "authors_approve",
	"transitions", "ignore_update_merges", "rules", "sections", "trusted_issuers", "users", "teams", "owners", "from", "to", "approvals", "by",
	"agents", "accounts", "sponsors", "disclosure", "first_time_open_pulls", "auto_merge"}

func suggestKey(k string) string { return registry.Suggest(k, keys) }

// Roles that a transition's `by` names besides aliases.
const (
	ByMaintainers = "maintainers"
	ByAdmins      = "admins"
	ByOwners      = "owners"
)

// Severities a rule may be given in `rules`.
var severities = []string{"error", "warning", "off"}

var (
	trailer = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,62}$`) })
	login   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$`) })
	slug    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`) })
)

// check finds everything wrong with a decoded policy, each at its line.
func (p *Policy) check() []LineError {
	var errs []LineError
	add := func(line int, format string, args ...any) {
		errs = append(errs, LineError{line, fmt.Sprintf(format, args...)})
	}
	if p.RequiredApprovals < 1 {
		add(p.line("required_approvals"), "required_approvals must be 1 or more, not %d", p.RequiredApprovals)
	}
	checkGroup := func(g *Group, at ...any) {
		for i, u := range g.Users {
			u = strings.TrimPrefix(u, "@")
			g.Users[i] = u
			if !login().MatchString(u) {
				add(p.line(append(at, "users", i)...), "user %q is not a GitHub login", g.Users[i])
			}
		}
		for i, t := range g.Teams {
			t = strings.TrimPrefix(t, "@")
			g.Teams[i] = t
			if org, s, ok := strings.Cut(t, "/"); !ok || org == "" || s == "" || strings.Contains(s, "/") {
				add(p.line(append(at, "teams", i)...), "team %q: write it as org/team-slug", t)
			}
		}
		for i, a := range g.Aliases {
			if _, ok := p.Aliases[a]; !ok {
				msg := fmt.Sprintf("alias %q is not defined under aliases", a)
				if s := registry.Suggest(a, mapKeys(p.Aliases)); s != "" {
					msg += "; did you mean " + s + "?"
				}
				add(p.line(append(at, "aliases", i)...), "%s", msg)
			}
		}
	}
	checkGroup(&p.Maintainers, "maintainers")
	checkGroup(&p.Admins, "admins")
	checkGroup(&p.Agents.Sponsors, "agents", "sponsors")
	for i, a := range p.Agents.Accounts {
		a = strings.TrimPrefix(a, "@")
		p.Agents.Accounts[i] = a
		if !login().MatchString(strings.TrimSuffix(a, "[bot]")) {
			add(p.line("agents", "accounts", i), "agent %q is not a GitHub login", a)
		}
	}
	if d := p.Agents.Disclosure; d != "" && !trailer().MatchString(d) {
		add(p.line("agents", "disclosure"), "disclosure %q is not a trailer name (letters, digits and dashes, e.g. Assisted-by)", d)
	}
	if p.FirstTimeOpenPulls < 0 {
		add(p.line("first_time_open_pulls"), "first_time_open_pulls must be 0 (no limit) or more, not %d", p.FirstTimeOpenPulls)
	}
	for _, name := range mapKeys(p.Aliases) {
		g := p.Aliases[name]
		if !slug().MatchString(name) || name == ByMaintainers || name == ByAdmins || name == ByOwners {
			add(p.line("aliases", name), "alias %q: use a lower-case name other than maintainers, admins and owners", name)
		}
		checkGroup(&g, "aliases", name)
		p.Aliases[name] = g
		if cycle := p.aliasCycle(name); cycle != nil {
			add(p.line("aliases", name), "aliases include each other in a cycle: %s", strings.Join(cycle, " → "))
		}
	}
	for _, name := range mapKeys(p.Modules) {
		m := p.Modules[name]
		if !slug().MatchString(name) {
			add(p.line("modules", name), "module %q is not a module slug", name)
		}
		if m.RequiredApprovals < 0 {
			add(p.line("modules", name, "required_approvals"), "required_approvals must be 1 or more, not %d", m.RequiredApprovals)
		}
		if m.Owners.Empty() {
			add(p.line("modules", name), "module %q names no owners", name)
		}
		checkGroup(&m.Owners, "modules", name, "owners")
		p.Modules[name] = m
	}
	statuses := make([]string, len(registry.Statuses))
	for i, s := range registry.Statuses {
		statuses[i] = string(s)
	}
	for i, t := range p.Transitions {
		for _, f := range []struct{ key, v string }{{"from", t.From}, {"to", t.To}} {
			if f.v == "" && f.key == "from" {
				continue
			}
			if !slices.Contains(statuses, f.v) {
				add(p.line("transitions", i, f.key), "transition %s %q is not a status (%s)", f.key, f.v, strings.Join(statuses, ", "))
			}
		}
		if t.From != "" && t.From == t.To {
			add(p.line("transitions", i), "transition from %s to itself is not a change of status", t.From)
		}
		if t.Approvals < 1 {
			add(p.line("transitions", i, "approvals"), "approvals must be 1 or more, not %d", t.Approvals)
		}
		if len(t.By) == 0 {
			add(p.line("transitions", i), "transition to %s says nobody in by (maintainers, admins, owners or an alias)", t.To)
		}
		for _, b := range t.By {
			if _, alias := p.Aliases[b]; !alias && b != ByMaintainers && b != ByAdmins && b != ByOwners {
				add(p.line("transitions", i, "by"), "by %q is not maintainers, admins, owners or an alias", b)
			}
		}
	}
	for _, id := range mapKeys(p.Rules) {
		if _, ok := registry.RuleByID(id); !ok {
			msg := fmt.Sprintf("rules: %q is not a rule of `sip validate --list-rules`", id)
			if s := registry.Suggest(id, ruleIDs()); s != "" {
				msg += "; did you mean " + s + "?"
			}
			add(p.line("rules", id), "%s", msg)
		}
		if !slices.Contains(severities, p.Rules[id]) {
			add(p.line("rules", id), "rules: %s: %q is not a severity (error, warning, off)", id, p.Rules[id])
		}
	}
	for i, iss := range p.TrustedIssuers {
		if !strings.HasPrefix(iss, "did:web:") || len(iss) == len("did:web:") {
			add(p.line("trusted_issuers", i), "trusted_issuers: %q is not a did:web identifier", iss)
		}
	}
	for _, t := range mapKeys(p.Sections) {
		if !slices.Contains(registry.Types, registry.Type(t)) {
			add(p.line("sections", t), "sections: %q is not a SIP type", t)
		}
		for i, s := range p.Sections[t] {
			if strings.TrimSpace(s) == "" {
				add(p.line("sections", t, i), "sections: an empty heading")
			}
		}
	}
	slices.SortStableFunc(errs, func(a, b LineError) int { return a.Line - b.Line })
	return errs
}

// aliasCycle returns the cycle through name (name → … → name), if any.
func (p *Policy) aliasCycle(name string) []string {
	var walk func(at string, path []string) []string
	seen := map[string]bool{}
	walk = func(at string, path []string) []string {
		for _, next := range p.Aliases[at].Aliases {
			if next == name {
				return append(slices.Clone(path), next)
			}
			if seen[next] {
				continue
			}
			seen[next] = true
			if c := walk(next, append(path, next)); c != nil {
				return c
			}
		}
		return nil
	}
	return walk(name, []string{name})
}

// Expand resolves a group's aliases into users and teams, each once.
func (p *Policy) Expand(g Group) Group {
	out := Group{}
	seen := map[string]bool{}
	var add func(g Group)
	add = func(g Group) {
		for _, u := range g.Users {
			if k := "u:" + strings.ToLower(u); !seen[k] {
				seen[k] = true
				out.Users = append(out.Users, u)
			}
		}
		for _, t := range g.Teams {
			if k := "t:" + strings.ToLower(t); !seen[k] {
				seen[k] = true
				out.Teams = append(out.Teams, t)
			}
		}
		for _, a := range g.Aliases {
			if k := "a:" + a; !seen[k] {
				seen[k] = true
				add(p.Aliases[a])
			}
		}
	}
	add(g)
	return out
}

// People lists every user and team the policy names anywhere, for
// checking that they exist.
func (p *Policy) People() (users, teams []string) {
	all := []Group{p.Maintainers, p.Admins}
	for _, n := range mapKeys(p.Aliases) {
		all = append(all, p.Aliases[n])
	}
	for _, n := range mapKeys(p.Modules) {
		all = append(all, p.Modules[n].Owners)
	}
	for _, g := range all {
		users = append(users, g.Users...)
		teams = append(teams, g.Teams...)
	}
	slices.Sort(users)
	slices.Sort(teams)
	return slices.Compact(users), slices.Compact(teams)
}

// Line is the line of the first place the policy file names value (a user
// or team), for pointing at it; 0 when unknown.
func (p *Policy) Line(value string) int {
	var find func(n *yaml.Node) int
	find = func(n *yaml.Node) int {
		if n == nil {
			return 0
		}
		if n.Kind == yaml.ScalarNode && strings.TrimPrefix(n.Value, "@") == value {
			return n.Line
		}
		for _, c := range n.Content {
			if l := find(c); l > 0 {
				return l
			}
		}
		return 0
	}
	return find(p.root)
}

// line finds the line of a key path (map keys as strings, list indices as
// ints) in the policy file; it stops at the deepest part that exists.
func (p *Policy) line(path ...any) int {
	n, at := p.root, 0
	if n != nil {
		at = n.Line
	}
	for _, step := range path {
		if n == nil {
			break
		}
		var next *yaml.Node
		switch s := step.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == s {
						at, next = n.Content[i].Line, n.Content[i+1]
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && s < len(n.Content) {
				next = n.Content[s]
				at = next.Line
			}
		}
		n = next
	}
	return at
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func ruleIDs() []string {
	out := make([]string, len(registry.Rules))
	for i, r := range registry.Rules {
		out[i] = r.ID
	}
	return out
}
