// Package policy is the approval policy language of a SIP repository: who
// may approve which change, read from .github/sip.yml on the default
// branch. It parses and checks a policy, derives what a change requires
// (Requirements), and decides a pull request's reviews against it
// (Decide). The GitHub App and `sip policy` share it, so a local
// explanation and the check run agree.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/sipregistry/sip/registry"
)

// Path is where a repository keeps its policy, read from the default
// branch only: a pull request cannot change its own policy.
const Path = ".github/sip.yml"

// GovernanceFiles are the files that govern the App itself: a pull request
// that adds, edits, renames or deletes one needs an admin's approval.
var GovernanceFiles = []string{Path}

// IsGovernance reports whether a repository path is a governance file.
func IsGovernance(name string) bool { return slices.Contains(GovernanceFiles, name) }

// Group is a set of people: GitHub logins, teams and named aliases.
type Group struct {
	// Users are GitHub logins.
	Users []string `yaml:"users"`
	// Teams are "org/team-slug"; only active members count.
	Teams []string `yaml:"teams"`
	// Aliases name other groups of the policy's aliases.
	Aliases []string `yaml:"aliases"`
}

// Empty reports whether the group names nobody.
func (g Group) Empty() bool { return len(g.Users)+len(g.Teams)+len(g.Aliases) == 0 }

// Agents configures pull requests written by AI agents.
type Agents struct {
	// Accounts are the GitHub logins of agents.
	Accounts []string `yaml:"accounts"`
	// Sponsors are the humans whose approval an agent's pull request
	// needs (default: the maintainers).
	Sponsors Group `yaml:"sponsors"`
	// Disclosure is the trailer an agent's pull request must carry, in
	// its description or its head commit's message, e.g.
	// "Assisted-by: <agent and model>" (default Assisted-by).
	Disclosure string `yaml:"disclosure"`
}

// DefaultDisclosure is the trailer an agent's pull request carries when
// the policy names none.
const DefaultDisclosure = "Assisted-by"

// IsAgent says whether login is an agent's account under the policy.
func (p *Policy) IsAgent(login string) bool {
	for _, a := range p.Agents.Accounts {
		if strings.EqualFold(a, login) {
			return true
		}
	}
	return false
}

// Disclosure is the trailer agents' pull requests carry.
func (p *Policy) Disclosure() string {
	if p.Agents.Disclosure == "" {
		return DefaultDisclosure
	}
	return p.Agents.Disclosure
}

// Discloses says whether one of texts has a line "<trailer>: <value>".
func Discloses(trailer string, texts ...string) bool {
	for _, t := range texts {
		for _, line := range strings.Split(t, "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if ok && strings.EqualFold(strings.TrimSpace(k), trailer) && strings.TrimSpace(v) != "" {
				return true
			}
		}
	}
	return false
}

// Module is the owners of the SIPs of one module.
type Module struct {
	// Owners approve changes to the module's SIPs, besides the maintainers.
	Owners Group `yaml:"owners"`
	// RequiredApprovals, when set, replaces the policy's for the module.
	RequiredApprovals int `yaml:"required_approvals"`
}

// Transition is a rule for a change of a SIP's status.
type Transition struct {
	// From is the status before; empty matches any, including a new SIP.
	From string `yaml:"from"`
	// To is the status after.
	To string `yaml:"to"`
	// Approvals is how many of By must approve (default 1).
	Approvals int `yaml:"approvals"`
	// By names who may approve: maintainers, admins, owners (of the
	// SIP's module), or an alias.
	By Names `yaml:"by"`
}

// Names is a list of names that may be written as one name.
type Names []string

// UnmarshalYAML accepts `by: maintainers` as well as `by: [a, b]`.
func (n *Names) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		*n = Names{v.Value}
		return nil
	}
	var list []string
	if err := v.Decode(&list); err != nil {
		return err
	}
	*n = list
	return nil
}

// Policy is a repository's approval policy for SIP pull requests.
// Without maintainers (no file, or none listed), the repository's admins
// and maintainers (by their role on it) are the maintainers; without
// admins, the repository's admins are.
type Policy struct {
	Maintainers Group `yaml:"maintainers"`
	// Admins approve changes to the governance files (GovernanceFiles),
	// one approval being enough; maintainers alone cannot.
	Admins Group `yaml:"admins"`
	// RequiredApprovals is how many approvals a change to a SIP needs
	// (default 1).
	RequiredApprovals int `yaml:"required_approvals"`
	// Aliases are named groups, usable wherever a group is.
	Aliases map[string]Group `yaml:"aliases"`
	// Modules give the SIPs of a module their owners.
	Modules map[string]Module `yaml:"modules"`
	// AuthorsApprove lets the GitHub users a SIP's author field names
	// (as @handle, on the default branch) approve changes to it that
	// keep its status.
	AuthorsApprove bool `yaml:"authors_approve"`
	// Transitions are the rules for status changes, first match wins.
	Transitions []Transition `yaml:"transitions"`
	// IgnoreUpdateMerges keeps approvals across merges of the base branch
	// into the pull request: an approval stays while what the pull
	// request itself changes stays the same.
	IgnoreUpdateMerges bool `yaml:"ignore_update_merges"`
	// Rules sets the severity of validation rules: error, warning or off.
	Rules map[string]string `yaml:"rules"`
	// TrustedIssuers are the did:web issuers whose credentials SIPs may
	// accept as prerequisites (credential-issuer-untrusted).
	TrustedIssuers []string `yaml:"trusted_issuers"`
	// Sections lists the level-2 headings a SIP body of a type must have
	// (body-sections); a type not listed keeps the defaults.
	Sections map[string][]string `yaml:"sections"`
	// Agents are the accounts of AI agents: they may author pull
	// requests, which then need a human sponsor's approval and a
	// disclosure; their own approvals never count.
	Agents Agents `yaml:"agents"`
	// FirstTimeOpenPulls, when above 0, is how many pull requests a
	// first-time contributor may have open at once: beyond it, each of
	// their pull requests is blocked until others close.
	FirstTimeOpenPulls int `yaml:"first_time_open_pulls"`
	// AutoMerge lets the App merge safe edits by itself: an author of a
	// draft SIP (named in it on the default branch) editing only that
	// draft, which stays a draft in its module, with every check green.
	AutoMerge bool `yaml:"auto_merge"`

	root *yaml.Node
}

// Error is a policy that cannot be used, with the lines it is about.
type Error struct {
	Problems []LineError
}

// LineError is one thing wrong with a policy file, at a line (0 when the
// file as a whole is wrong).
type LineError struct {
	Line    int
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Line > 0 {
			fmt.Fprintf(&b, "%s:%d: %s", Path, p.Line, p.Message)
		} else {
			fmt.Fprintf(&b, "%s: %s", Path, p.Message)
		}
	}
	return b.String()
}

// Parse reads a policy strictly: an unknown key, a wrong type, a team
// written without its organisation, an alias that does not exist or that
// includes itself, a transition to a status that does not exist, or a
// rule the validator does not have is an error naming its line, so a
// typo cannot silently weaken the policy. An empty file is the default
// policy.
func Parse(data []byte) (*Policy, error) {
	p := &Policy{}
	if len(bytes.TrimSpace(data)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(p); err != nil {
			return nil, yamlError(err)
		}
		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err == nil && len(root.Content) > 0 {
			p.root = root.Content[0]
		}
	}
	if p.RequiredApprovals == 0 {
		p.RequiredApprovals = 1
	}
	for i := range p.Transitions {
		if p.Transitions[i].Approvals == 0 {
			p.Transitions[i].Approvals = 1
		}
	}
	if errs := p.check(); len(errs) > 0 {
		return nil, &Error{Problems: errs}
	}
	return p, nil
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): (.*)$`) })

// yamlError turns a YAML error into line-numbered problems, unknown keys
// with the nearest known one.
func yamlError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine().FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return &Error{Problems: []LineError{{n, m[2]}}}
		}
		return &Error{Problems: []LineError{{0, msg}}}
	}
	e := &Error{}
	for _, s := range te.Errors {
		m := yamlLine().FindStringSubmatch(s)
		if m == nil {
			e.Problems = append(e.Problems, LineError{0, s})
			continue
		}
		n, _ := strconv.Atoi(m[1])
		e.Problems = append(e.Problems, LineError{n, unknownField(m[2])})
	}
	return e
}

var fieldNotFound = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^field (\S+) not found in type \S+$`) })

func unknownField(msg string) string {
	m := fieldNotFound().FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	out := "field " + m[1] + " not found (unknown key)"
	if s := suggestKey(m[1]); s != "" {
		out += "; did you mean " + s + "?"
	}
	return out
}

// Apply sets what the policy says of validation on opts: the severity of
// each rule the repository configured and the sections each type needs.
// The App and `sip validate --config` both call it, so a repository's
// rules mean the same on a laptop and on its pull requests.
func (p *Policy) Apply(opts *registry.Options) {
	if len(p.Rules) > 0 {
		opts.Severity = p.Rules
	}
	opts.TrustedIssuers = append([]string{}, p.TrustedIssuers...)
	if len(p.Sections) > 0 {
		opts.Body.Sections = make(map[registry.Type][]string, len(p.Sections))
		for t, s := range p.Sections {
			opts.Body.Sections[registry.Type(t)] = s
		}
	}
}
