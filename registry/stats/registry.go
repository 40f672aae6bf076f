package stats

import (
	"sort"
	"strings"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// Overview is the registry's success metrics, as the design names them.
type Overview struct {
	// Adoption: agents registered for at least one evaluation, of all
	// agents.
	Adoption Rate
	// Completion: registrations that completed, of those that ended
	// (completed or cancelled; open ones are still under way).
	Completion Rate
	// PassRate: passes of graded attempts (passed, failed, expired).
	PassRate Rate
	// Open counts registrations still under way.
	Open int
	// Outcomes counts results by outcome.
	Outcomes []OutcomeCount
	// Contributors are the SIPs' authors by SIPs written, most first;
	// Merged counts SIPs by the month their first version was recorded.
	Contributors []Contributor
	Merged       []Period // Attempts holds the SIPs merged that month
	// Modules counts the evaluations (not process SIPs, not removed) in
	// each module, most first; ActiveModules how many modules have an
	// active one.
	Modules       []ModuleCount
	ActiveModules int
	// Evaluations counts evaluation SIPs, Active the active ones.
	Evaluations, Active int
}

// Contributor is an author and how many SIPs name them.
type Contributor struct {
	Author string
	SIPs   int
}

// ModuleCount is a module and its evaluations.
type ModuleCount struct {
	Module              string
	Evaluations, Active int
}

// Summarize the registry: t from the store, the entries of the catalog.
func Overall(t Totals, entries []*registry.Entry) *Overview {
	o := &Overview{Adoption: Rate{t.AgentsRegistered, t.Agents}}
	ended := t.Registrations[evaluation.RegCompleted] + t.Registrations[evaluation.RegCancelled]
	o.Completion = Rate{t.Registrations[evaluation.RegCompleted], ended}
	o.Open = t.Registrations[evaluation.RegRegistered] + t.Registrations[evaluation.RegInProgress] + t.Registrations[evaluation.RegAwaitingGrading]
	gradedN := 0
	for _, oc := range Outcomes {
		n := t.Outcomes[oc]
		if graded(oc) {
			gradedN += n
		}
		if n > 0 {
			o.Outcomes = append(o.Outcomes, OutcomeCount{oc, n})
		}
	}
	o.PassRate = Rate{t.Outcomes[evaluation.OutcomePassed], gradedN}

	authors := map[string]int{}
	modules := map[string]*ModuleCount{}
	var merged []Fact // one per SIP, as months count facts
	for _, e := range entries {
		if e.Removed {
			continue
		}
		for _, a := range authorsOf(e.Author) {
			authors[a]++
		}
		if at, ok := t.FirstSynced[e.ID]; ok {
			merged = append(merged, Fact{CompletedAt: at})
		}
		if !e.Type.IsEvaluation() {
			continue
		}
		o.Evaluations++
		m := modules[e.Module]
		if m == nil {
			m = &ModuleCount{Module: e.Module}
			modules[e.Module] = m
		}
		m.Evaluations++
		if e.Status == registry.StatusActive {
			m.Active++
			o.Active++
		}
	}
	for a, n := range authors {
		o.Contributors = append(o.Contributors, Contributor{a, n})
	}
	sort.Slice(o.Contributors, func(i, j int) bool {
		a, b := o.Contributors[i], o.Contributors[j]
		if a.SIPs != b.SIPs {
			return a.SIPs > b.SIPs
		}
		return strings.ToLower(a.Author) < strings.ToLower(b.Author)
	})
	for _, m := range modules {
		o.Modules = append(o.Modules, *m)
		if m.Active > 0 {
			o.ActiveModules++
		}
	}
	sort.Slice(o.Modules, func(i, j int) bool {
		a, b := o.Modules[i], o.Modules[j]
		if a.Evaluations != b.Evaluations {
			return a.Evaluations > b.Evaluations
		}
		return a.Module < b.Module
	})
	if len(merged) > 0 {
		sort.Slice(merged, func(i, j int) bool { return merged[i].CompletedAt.Before(merged[j].CompletedAt) })
		o.Merged = months(merged)
	}
	return o
}

// months buckets facts (oldest first) by month, from the first's to the
// last's, at most maxMonths (the latest).
func months(facts []Fact) []Period {
	first, last := monthStart(facts[0].CompletedAt), monthStart(facts[len(facts)-1].CompletedAt)
	if from := last.AddDate(0, 1-maxMonths, 0); first.Before(from) {
		first = from
	}
	var out []Period
	index := map[time.Time]int{}
	for t := first; !t.After(last); t = t.AddDate(0, 1, 0) {
		index[t] = len(out)
		out = append(out, Period{Start: t})
	}
	for _, f := range facts {
		if i, ok := index[monthStart(f.CompletedAt)]; ok {
			out[i].Attempts++
		}
	}
	return out
}

// authorsOf splits a SIP's author field into its authors: the GitHub
// handles it names, or else the names between commas.
func authorsOf(author string) []string {
	if hs := registry.Handles(author); len(hs) > 0 {
		out := make([]string, len(hs))
		for i, h := range hs {
			out[i] = "@" + strings.TrimPrefix(h, "@")
		}
		return out
	}
	var out []string
	for _, part := range strings.Split(author, ",") {
		if name, _, _ := strings.Cut(part, "<"); strings.TrimSpace(name) != "" {
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out
}
