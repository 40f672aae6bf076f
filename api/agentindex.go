package api

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/sipregistry/sip/registry"
)

// agentIndex is the public agents as search reads them, in memory: a
// scan of a few thousand names in Go costs less than a query that cannot
// use an index. It is reloaded when older than agentIndexTTL, so a new
// agent is found within that time; hits are checked against the store
// before they are shown, so an agent that hides its results is never
// shown, not even from an older index.
type agentIndex struct {
	load   func(ctx context.Context) ([]registry.AgentCard, error)
	now    func() time.Time
	flight singleflight.Group

	mu    sync.Mutex
	at    time.Time
	cards []indexedAgent
}

type indexedAgent struct {
	card             registry.AgentCard
	nameKey, descKey string
}

// agentIndexTTL is how long an index is used before it is reloaded.
const agentIndexTTL = 10 * time.Second

func (x *agentIndex) current(ctx context.Context) ([]indexedAgent, error) {
	now := x.now()
	x.mu.Lock()
	cards, at := x.cards, x.at
	x.mu.Unlock()
	if cards != nil && now.Sub(at) < agentIndexTTL && !now.Before(at) {
		return cards, nil
	}
	v, err, _ := x.flight.Do("load", func() (any, error) {
		list, err := x.load(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]indexedAgent, len(list))
		for i, c := range list {
			out[i] = indexedAgent{card: c, nameKey: strings.ToLower(c.Name), descKey: strings.ToLower(c.Description)}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].nameKey < out[j].nameKey })
		x.mu.Lock()
		x.cards, x.at = out, now
		x.mu.Unlock()
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]indexedAgent), nil
}

// matchAgents lists up to limit agents whose name or description
// contains query, ignoring case: the agent named query first, then names
// that start with it, then names that contain it, then descriptions;
// each group by name.
func matchAgents(agents []indexedAgent, query string, limit int) []registry.AgentCard {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" || limit <= 0 {
		return nil
	}
	// each group is in name order already, so it needs no more than
	// limit members
	var groups [4][]registry.AgentCard
	for _, a := range agents {
		g := -1
		switch {
		case a.nameKey == q:
			g = 0
		case strings.HasPrefix(a.nameKey, q):
			g = 1
		case strings.Contains(a.nameKey, q):
			g = 2
		case len(groups[3]) < limit && strings.Contains(a.descKey, q):
			g = 3
		}
		if g >= 0 && len(groups[g]) < limit {
			groups[g] = append(groups[g], a.card)
		}
		if len(groups[0])+len(groups[1]) >= limit { // nothing later can rank higher
			break
		}
	}
	var out []registry.AgentCard
	for _, g := range groups {
		out = append(out, g...)
	}
	return out[:min(len(out), limit)]
}
