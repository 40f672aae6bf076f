package policy

import (
	"slices"
	"strconv"

	"github.com/sipregistry/sip/registry"
)

// Change is what a pull request changes that the policy governs.
type Change struct {
	// SIPs are the SIP files it adds, edits or deletes.
	SIPs []SIPChange
	// Other are files under the SIP folder that validation or sync reads
	// but that hold no SIP (a file that does not parse, a stray file).
	Other []string
	// Governance are the governance files it changes.
	Governance []string
}

// Empty reports whether the change touches nothing the policy governs.
func (c Change) Empty() bool { return len(c.SIPs)+len(c.Other)+len(c.Governance) == 0 }

// SIPChange is one SIP file before and after a change.
type SIPChange struct {
	Path   string
	Number int
	// Before is the SIP on the base branch (nil when the change adds it);
	// After is the SIP as it would merge (nil when the change deletes it).
	Before, After *State
}

// State is what the policy reads of a SIP.
type State struct {
	Module  string
	Status  string
	Authors []string // GitHub logins named in the author field
}

// Name is how people call the changed SIP: SIP-12, or its path.
func (s SIPChange) Name() string {
	if s.Number > 0 {
		return "SIP-" + strconv.Itoa(s.Number)
	}
	return s.Path
}

// ChangeOf describes a change from the paths it touches and the SIP
// documents before (the base branch) and after (as it would merge).
func ChangeOf(dir string, touched []string, before, after []*registry.Document) Change {
	index := func(docs []*registry.Document) map[string]*registry.Document {
		m := make(map[string]*registry.Document, len(docs))
		for _, d := range docs {
			m[d.Path] = d
		}
		return m
	}
	b, a := index(before), index(after)
	var c Change
	for _, p := range slices.Compact(slices.Sorted(slices.Values(touched))) {
		if IsGovernance(p) {
			c.Governance = append(c.Governance, p)
			continue
		}
		if !registry.Reads(dir, p) {
			continue
		}
		sc := SIPChange{Path: p, Before: stateOf(b[p]), After: stateOf(a[p])}
		for _, d := range []*registry.Document{a[p], b[p]} {
			if d != nil && d.SIP != nil && sc.Number == 0 {
				sc.Number = d.SIP.Number
			}
		}
		if sc.Before == nil && sc.After == nil {
			c.Other = append(c.Other, p)
			continue
		}
		c.SIPs = append(c.SIPs, sc)
	}
	return c
}

func stateOf(d *registry.Document) *State {
	if d == nil || d.SIP == nil {
		return nil
	}
	return &State{Module: d.SIP.Module, Status: string(d.SIP.Status), Authors: registry.Handles(d.SIP.Author)}
}
