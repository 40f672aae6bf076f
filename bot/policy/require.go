package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sipregistry/sip/registry"
)

// Approvers is one set of people who may approve.
type Approvers struct {
	// Name says who they are: maintainers, admins, owners of module m,
	// authors of SIP-n, or an alias.
	Name string
	// Group is who they are, aliases expanded.
	Group Group
	// Roles are the repository roles that stand in for an empty group.
	Roles []string
}

// Requirement is one rule of the policy as it applies to a change: Count
// approvals from any of Who.
type Requirement struct {
	Rule  string   // the rule, e.g. "status draft → active"
	About []string // what it covers: SIP-3, a governance file
	Count int
	Who   []Approvers
}

// WhoNames names the approvers of a requirement for people.
func (r Requirement) WhoNames() []string {
	out := make([]string, len(r.Who))
	for i, w := range r.Who {
		out[i] = w.Name
	}
	return out
}

func (p *Policy) maintainers() Approvers {
	a := Approvers{Name: ByMaintainers, Group: p.Expand(p.Maintainers)}
	if p.Maintainers.Empty() {
		a.Roles = []string{"admin", "maintain"}
	}
	return a
}

func (p *Policy) admins() Approvers {
	a := Approvers{Name: ByAdmins, Group: p.Expand(p.Admins)}
	if p.Admins.Empty() {
		a.Roles = []string{"admin"}
	}
	return a
}

func (p *Policy) owners(module string) (Approvers, bool) {
	m, ok := p.Modules[module]
	if !ok {
		return Approvers{}, false
	}
	return Approvers{Name: "owners of module " + module, Group: p.Expand(m.Owners)}, true
}

// transition finds the first transition rule for a status change. A new
// SIP (from is empty) is taken to start as a draft: adding a SIP as active
// is a draft → active transition, so it cannot skip the activation rule.
func (p *Policy) transition(from, to string) (Transition, bool) {
	if from == "" {
		from = string(registry.StatusDraft)
	}
	for _, t := range p.Transitions {
		if t.To == to && (t.From == "" || t.From == from) {
			return t, true
		}
	}
	return Transition{}, false
}

// Requirements says what a change needs, one requirement per rule that
// applies; changes under the same rule are grouped. Every requirement
// must be met, and one change may bring several: each part of it needs
// what it would need alone, so combining parts cannot route around a
// rule.
//
//   - A governance file needs 1 admin.
//   - A SIP whose status changes (a new SIP counts as changing to its
//     status) under a transition rule needs that rule's approvals from
//     its `by` (owners meaning the owners of the module it ends in).
//   - A SIP moved to another module also needs, for each of the two
//     modules, the module's (or the policy's) number of approvals from
//     that module's owners or the maintainers.
//   - A deleted SIP is deprecated by the registry: it needs what a
//     change of its status to deprecated needs, and the maintainers.
//   - Any other SIP needs the module's (or the policy's) number of
//     approvals from its module's owners or the maintainers; when the
//     status stays and the policy lets authors approve, the authors
//     named in the SIP on the base branch count too.
//   - A file of the SIP folder that holds no SIP needs the maintainers.
func (p *Policy) Requirements(c Change) []Requirement {
	var out []Requirement
	add := func(r Requirement, about string) {
		for i := range out {
			if out[i].Rule == r.Rule && out[i].Count == r.Count && slices.Equal(out[i].WhoNames(), r.WhoNames()) {
				out[i].About = append(out[i].About, about)
				return
			}
		}
		r.About = []string{about}
		out = append(out, r)
	}
	for _, s := range c.SIPs {
		for _, r := range p.sipRequirements(s) {
			add(r, s.Name())
		}
	}
	for _, o := range c.Other {
		add(Requirement{Rule: "a file in the SIP folder that holds no SIP", Count: p.RequiredApprovals, Who: []Approvers{p.maintainers()}}, o)
	}
	for _, g := range c.Governance {
		add(Requirement{Rule: "a governance file", Count: 1, Who: []Approvers{p.admins()}}, g)
	}
	return out
}

// moduleApprovals is how many approvals a change in a module needs.
func (p *Policy) moduleApprovals(module string) int {
	if m, ok := p.Modules[module]; ok && m.RequiredApprovals > 0 {
		return m.RequiredApprovals
	}
	return p.RequiredApprovals
}

// ownersOrMaintainers are who may approve a change in a module.
func (p *Policy) ownersOrMaintainers(module string) []Approvers {
	if o, ok := p.owners(module); ok {
		return []Approvers{o, p.maintainers()}
	}
	return []Approvers{p.maintainers()}
}

// transitionRequirement is what a status change needs under the first
// transition rule that matches it; false when no rule does.
func (p *Policy) transitionRequirement(from, to, module, rule string) (Requirement, bool) {
	t, ok := p.transition(from, to)
	if !ok {
		return Requirement{}, false
	}
	r := Requirement{Rule: rule, Count: t.Approvals}
	for _, b := range t.By {
		switch b {
		case ByMaintainers:
			r.Who = append(r.Who, p.maintainers())
		case ByAdmins:
			r.Who = append(r.Who, p.admins())
		case ByOwners:
			if o, ok := p.owners(module); ok {
				r.Who = append(r.Who, o)
			}
		default:
			r.Who = append(r.Who, Approvers{Name: "alias " + b, Group: p.Expand(p.Aliases[b])})
		}
	}
	if len(r.Who) == 0 { // `by: owners` of a module without owners
		r.Who = []Approvers{p.maintainers()}
	}
	return r, true
}

// sipRequirements are what one SIP's change needs.
func (p *Policy) sipRequirements(s SIPChange) []Requirement {
	from, to := "", ""
	if s.Before != nil {
		from = s.Before.Status
	}
	if s.After != nil {
		to = s.After.Status
	}
	if s.After == nil {
		// The registry deprecates a SIP whose file is gone: deleting is
		// deprecating, and needs what deprecating needs.
		out := []Requirement{{Rule: "a SIP deleted", Count: p.RequiredApprovals, Who: []Approvers{p.maintainers()}}}
		if from != string(registry.StatusDeprecated) {
			if r, ok := p.transitionRequirement(from, string(registry.StatusDeprecated), s.Before.Module,
				"a SIP deleted (the registry deprecates it): status "+orNew(from)+" → deprecated"); ok {
				out = append(out, r)
			}
		}
		return out
	}
	var out []Requirement
	transitioned := false
	if from != to && (from != "" || to != string(registry.StatusDraft)) {
		if r, ok := p.transitionRequirement(from, to, s.After.Module, "status "+orNew(from)+" → "+to); ok {
			out, transitioned = append(out, r), true
		}
	}
	if s.Before != nil && s.Before.Module != s.After.Module {
		// A move needs both modules' say, besides any transition's.
		for _, m := range []struct{ module, rule string }{
			{s.Before.Module, fmt.Sprintf("a SIP moved out of module %s (to %s)", s.Before.Module, s.After.Module)},
			{s.After.Module, fmt.Sprintf("a SIP moved into module %s (from %s)", s.After.Module, s.Before.Module)},
		} {
			out = append(out, Requirement{Rule: m.rule, Count: p.moduleApprovals(m.module), Who: p.ownersOrMaintainers(m.module)})
		}
		return out
	}
	if transitioned {
		return out
	}
	module := s.After.Module
	r := Requirement{Rule: "a SIP changed", Who: p.ownersOrMaintainers(module), Count: p.moduleApprovals(module)}
	if s.Before == nil {
		r.Rule = "a new SIP"
	}
	if _, ok := p.owners(module); ok {
		r.Rule += " in module " + module
	}
	if from != to && s.Before != nil {
		r.Rule += ", status " + from + " → " + to
	}
	if p.AuthorsApprove && s.Before != nil && from == to && len(s.Before.Authors) > 0 {
		r.Who = append(r.Who, Approvers{Name: "authors of " + s.Name(), Group: Group{Users: s.Before.Authors}})
		r.Rule += " (status kept: its authors may approve)"
	}
	return append(out, r)
}

func orNew(status string) string {
	if status == "" {
		return "(new)"
	}
	return status
}

// describe lists an approver set's members for people, or the roles that
// stand in for an empty one.
func (a Approvers) describe() string {
	var out []string
	for _, u := range a.Group.Users {
		out = append(out, "@"+u)
	}
	for _, t := range a.Group.Teams {
		out = append(out, "@"+t)
	}
	if len(out) == 0 && len(a.Roles) > 0 {
		return "the repository's " + strings.Join(roleNames(a.Roles), " and ")
	}
	if len(out) == 0 {
		return "nobody"
	}
	return strings.Join(out, ", ")
}

func roleNames(roles []string) []string {
	out := make([]string, len(roles))
	for i, r := range roles {
		switch r {
		case "admin":
			out[i] = "admins"
		case "maintain":
			out[i] = "maintainers"
		default:
			out[i] = r + "s"
		}
	}
	return out
}

// AuthorRequirements are what a pull request needs because of who wrote
// it: an agent's needs a human sponsor's approval.
func (p *Policy) AuthorRequirements(author string) []Requirement {
	if !p.IsAgent(author) {
		return nil
	}
	who := Approvers{Name: "sponsors", Group: p.Expand(p.Agents.Sponsors)}
	if p.Agents.Sponsors.Empty() {
		who = p.maintainers()
	}
	return []Requirement{{Rule: "a pull request by an agent: a human sponsor", About: []string{"@" + author}, Count: 1, Who: []Approvers{who}}}
}

// SafeEdit says whether a change by author is a safe edit the policy lets
// through without approvals (auto_merge): it changes exactly one SIP and
// nothing else the policy governs, the SIP is a draft on the base branch
// and stays a draft in the same module, and author is one of the authors
// its author field names on the base branch. An agent's edit never is.
func (p *Policy) SafeEdit(c Change, author string) bool {
	if !p.AutoMerge || p.IsAgent(author) || len(c.SIPs) != 1 || len(c.Other)+len(c.Governance) > 0 {
		return false
	}
	s := c.SIPs[0]
	draft := string(registry.StatusDraft)
	if s.Before == nil || s.After == nil || s.Before.Status != draft || s.After.Status != draft || s.Before.Module != s.After.Module {
		return false
	}
	return slices.ContainsFunc(s.Before.Authors, func(a string) bool { return strings.EqualFold(a, author) })
}

// RequirementsFor is what a pull request by author that makes change
// needs: the change's requirements and its author's, or, for a safe edit
// (auto_merge), none but that nobody who may approve objects.
func (p *Policy) RequirementsFor(c Change, author string) []Requirement {
	reqs := append(p.Requirements(c), p.AuthorRequirements(author)...)
	if p.SafeEdit(c, author) {
		return []Requirement{{Rule: "a safe edit (auto_merge): an author of the draft editing only it", About: []string{c.SIPs[0].Name()},
			Count: 0, Who: reqs[0].Who}}
	}
	return reqs
}
