package registry

import (
	"slices"
	"strings"
)

// The prerequisite-cycle rule: a SIP that requires itself (here) and
// cycles through several SIPs (cycleProblems) are both reported from
// this file.

// selfCycleProblem reports d requiring itself, at that prerequisite.
func selfCycleProblem(d *Document, at Span) Problem {
	return problemAt(d, at, SeverityError, "prerequisite-cycle", "Remove it: a SIP cannot require itself.",
		"%s requires itself", d.SIP.ID)
}

// cycleProblems finds prerequisite cycles with Tarjan's strongly connected
// components and reports each once: on the SIP that closed it (the
// highest-numbered member; numbers are given in order, so it is the one
// added last), at its prerequisite that continues the cycle, with the
// whole cycle spelled out. A component holding several cycles is
// reported by one of them; the next shows once that one is broken.
func cycleProblems(docs []*Document, byID map[string][]*Document) []Problem {
	graph := map[string][]string{}
	node := map[string]*Document{}
	for id, g := range byID {
		node[id] = g[0]
		for _, p := range g[0].SIP.Prerequisites {
			if _, ok := byID[p]; ok && p != id && !slices.Contains(graph[id], p) {
				graph[id] = append(graph[id], p)
			}
		}
	}
	var out []Problem
	for _, scc := range stronglyConnected(graph) {
		if len(scc) < 2 {
			continue
		}
		in := map[string]bool{}
		closer := scc[0]
		for _, id := range scc {
			in[id] = true
			if closesBefore(node[closer], node[id]) {
				closer = id
			}
		}
		c := cyclePath(closer, graph, in)
		out = append(out, cycleProblem(node[closer], c[:len(c)-1], 0))
	}
	return out
}

// closesBefore orders the members of a cycle: a is before b when b was
// added later (a higher number; then a later path).
func closesBefore(a, b *Document) bool {
	if a.SIP.Number != b.SIP.Number {
		return a.SIP.Number < b.SIP.Number
	}
	return a.Path < b.Path
}

// stronglyConnected returns the strongly connected components of graph,
// visiting nodes in sorted order so the result is deterministic. It is
// iterative, so long prerequisite chains cannot overflow the stack.
func stronglyConnected(graph map[string][]string) [][]string {
	ids := make([]string, 0, len(graph))
	for id := range graph {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	next := 0
	type frame struct {
		id string
		i  int
	}
	for _, root := range ids {
		if _, seen := index[root]; seen {
			continue
		}
		work := []frame{{id: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			f := &work[len(work)-1]
			if f.i < len(graph[f.id]) {
				w := graph[f.id][f.i]
				f.i++
				if _, seen := index[w]; !seen {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					work = append(work, frame{id: w})
				} else if onStack[w] {
					low[f.id] = min(low[f.id], index[w])
				}
				continue
			}
			v := f.id
			work = work[:len(work)-1]
			if len(work) > 0 {
				parent := work[len(work)-1].id
				low[parent] = min(low[parent], low[v])
			}
			if low[v] == index[v] {
				var scc []string
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					scc = append(scc, w)
					if w == v {
						break
					}
				}
				slices.Sort(scc)
				out = append(out, scc)
			}
		}
	}
	return out
}

// cyclePath returns a shortest cycle from start back to start inside the
// component in, as a list that begins and ends with start.
func cyclePath(start string, graph map[string][]string, in map[string]bool) []string {
	prev := map[string]string{}
	queue := []string{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range graph[v] {
			if !in[w] {
				continue
			}
			if w == start {
				path := []string{start}
				for x := v; x != start; x = prev[x] {
					path = append(path, x)
				}
				path = append(path, start)
				slices.Reverse(path[1 : len(path)-1])
				return path
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []string{start, start}
}

// cycleProblem reports the cycle ring, read from position i, at d's
// prerequisite that continues it.
func cycleProblem(d *Document, ring []string, i int) Problem {
	n := len(ring)
	at := func(k int) string { return ring[(i+k)%n] }
	var parts []string
	const keep = 4
	if n <= 2*keep {
		for k := 0; k <= n; k++ {
			parts = append(parts, at(k))
		}
	} else {
		for k := 0; k < keep; k++ {
			parts = append(parts, at(k))
		}
		parts = append(parts, "…")
		for k := n - keep + 1; k <= n; k++ {
			parts = append(parts, at(k))
		}
	}
	msg := strings.Join(parts, " → ")
	if n > 2*keep {
		msg += " (" + groupDigits(n) + " SIPs)"
	}
	span := d.Span("prerequisites")
	for j, p := range d.SIP.Prerequisites {
		if p == at(1) {
			span = d.prereqSpan(j)
			break
		}
	}
	return problemAt(d, span, SeverityError, "prerequisite-cycle", "Remove one prerequisite of the cycle.",
		"prerequisites form a cycle: %s", msg)
}
