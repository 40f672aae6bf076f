package stats

// Evidenced returns the facts of results that were graded, here or by
// another registry whose record came along, and counts the others:
// results another registry asserted without evidence (backfilled,
// provisioned) are shown on their pages but not counted in statistics.
func Evidenced(facts []Fact) (_ []Fact, asserted int) {
	out := facts[:0:0]
	for _, f := range facts {
		if f.Provenance.Evidenced() {
			out = append(out, f)
		} else {
			asserted++
		}
	}
	if asserted == 0 {
		return facts, 0
	}
	return out, asserted
}
