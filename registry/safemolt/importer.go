package safemolt

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
)

// Importer imports a SafeMolt database into a sip store.
type Importer struct {
	Source Reader
	// Target writes; nil for a plan (a dry run), which needs Versions.
	Target evaluation.ImportStore
	// Versions are sip's version rows (read from Target when nil).
	Versions []evaluation.VersionRef
	// BatchSize is how many source rows a batch reads and writes (5,000
	// when 0: fewer, larger transactions write each index page fewer
	// times; a batch of results holds a few tens of MiB).
	BatchSize int
	Now       func() time.Time
	// Progress, when set, is told of every batch.
	Progress func(Progress)
	// MaxProblems bounds the problems a report lists (1000 when 0); all
	// are counted by kind.
	MaxProblems int
}

// Progress is where an import stands.
type Progress struct {
	Phase    string // "agents", "results", "sessions", "messages" or "transcripts"
	Read     int    // source rows read in this phase
	Written  evaluation.ImportCounts
	LastID   string // the last source id of the batch
	PlanOnly bool
}

// Report is what an import did, or a plan would do.
type Report struct {
	Plan bool
	// Tables counts the source's rows per table.
	Tables map[string]int
	// Agents, Results, Sessions, Messages and Jobs count source rows
	// read; Mapped what maps to sip (a plan writes nothing; an import
	// writes Mapped less what the ledger already held, and less the
	// messages and transcripts whose counterpart is not here, counted in
	// Written.Unmatched).
	Agents, Results, Sessions, Messages, Jobs, Mapped int
	Written                                           evaluation.ImportCounts
	// ByProvenance counts the mapped results by provenance.
	ByProvenance map[evaluation.Provenance]int
	// ProblemCounts counts problems by kind; Problems lists the first
	// MaxProblems.
	ProblemCounts map[string]int
	Problems      []Problem
	Elapsed       time.Duration
}

// Run imports (or, with plan, reports what an import would do). Agents
// come first, then results, then sessions, their messages and
// certification transcripts (which belong to results), each in batches
// in source order; every batch is
// one transaction, so an interrupted run leaves whole batches and a run
// again writes the rest.
func (im *Importer) Run(ctx context.Context, plan bool) (*Report, error) {
	start := time.Now()
	now := time.Now
	if im.Now != nil {
		now = im.Now
	}
	size := im.BatchSize
	if size <= 0 {
		size = 5000
	}
	maxProblems := im.MaxProblems
	if maxProblems <= 0 {
		maxProblems = 1000
	}
	if !plan && im.Target == nil {
		return nil, fmt.Errorf("safemolt: an import needs a target store")
	}
	refs := im.Versions
	if refs == nil {
		if im.Target == nil {
			return nil, fmt.Errorf("safemolt: a plan needs sip's versions or a store")
		}
		var err error
		if refs, err = im.Target.ImportVersions(ctx); err != nil {
			return nil, err
		}
	}
	versions := NewVersions(refs)
	rep := &Report{Plan: plan, ByProvenance: map[evaluation.Provenance]int{}, ProblemCounts: map[string]int{}}
	tables, err := im.Source.Tables(ctx)
	if err != nil {
		return nil, err
	}
	rep.Tables = tables
	note := func(ps []Problem) {
		for _, p := range ps {
			rep.ProblemCounts[p.Kind]++
			if len(rep.Problems) < maxProblems {
				rep.Problems = append(rep.Problems, p)
			}
		}
	}
	write := func(phase string, b *evaluation.ImportBatch, read int, last string) error {
		if !plan && !b.Empty() {
			b.Source, b.At = SourceName, now().UTC()
			n, err := im.Target.ImportBatch(ctx, b)
			if err != nil {
				return fmt.Errorf("safemolt: %s after %q: %w", phase, last, err)
			}
			rep.Written.Add(n)
		}
		if im.Progress != nil {
			im.Progress(Progress{Phase: phase, Read: read, Written: rep.Written, LastID: last, PlanOnly: plan})
		}
		return nil
	}

	agentPages, stop := readAhead(ctx, "", func(ctx context.Context, after string) ([]Agent, error) { return im.Source.Agents(ctx, after, size) },
		func(rows []Agent) string { return rows[len(rows)-1].ID })
	defer stop()
	for p := range agentPages {
		agents, err := p.rows, p.err
		if err != nil {
			return rep, err
		}
		if len(agents) == 0 {
			break
		}
		b := &evaluation.ImportBatch{}
		for i := range agents {
			ia, ps := MapAgent(&agents[i])
			note(ps)
			b.Agents = append(b.Agents, ia)
			for _, vr := range VettingResults(&agents[i], versions, now()) {
				rep.ByProvenance[vr.Result.Provenance]++
				b.Results = append(b.Results, vr)
			}
		}
		rep.Agents += len(agents)
		rep.Mapped += len(b.Agents) + len(b.Results)
		after := agents[len(agents)-1].ID
		if err := write("agents", b, rep.Agents, after); err != nil {
			return rep, err
		}
	}
	resultPages, stop := readAhead(ctx, "", func(ctx context.Context, after string) ([]Result, error) { return im.Source.Results(ctx, after, size) },
		func(rows []Result) string { return rows[len(rows)-1].ID })
	defer stop()
	for p := range resultPages {
		results, err := p.rows, p.err
		if err != nil {
			return rep, err
		}
		if len(results) == 0 {
			break
		}
		b := &evaluation.ImportBatch{}
		at := now()
		for i := range results {
			ir, ok, ps := MapResult(&results[i], versions, at)
			note(ps)
			if ok {
				rep.ByProvenance[ir.Result.Provenance]++
				b.Results = append(b.Results, ir)
			}
		}
		rep.Results += len(results)
		rep.Mapped += len(b.Results)
		after := results[len(results)-1].ID
		if err := write("results", b, rep.Results, after); err != nil {
			return rep, err
		}
	}
	sessionPages, stop := readAhead(ctx, "", func(ctx context.Context, after string) ([]Session, error) {
		return im.Source.Sessions(ctx, after, size)
	},
		func(rows []Session) string { return rows[len(rows)-1].ID })
	defer stop()
	for p := range sessionPages {
		sessions, err := p.rows, p.err
		if err != nil {
			return rep, err
		}
		if len(sessions) == 0 {
			break
		}
		b := &evaluation.ImportBatch{}
		for i := range sessions {
			is, ok, ps := MapSession(&sessions[i], versions, now())
			note(ps)
			if ok {
				b.Sessions = append(b.Sessions, is)
			}
		}
		rep.Sessions += len(sessions)
		rep.Mapped += len(b.Sessions)
		after := sessions[len(sessions)-1].ID
		if err := write("sessions", b, rep.Sessions, after); err != nil {
			return rep, err
		}
	}
	var numbering Numbering
	messagePages, stop := readAhead(ctx, MessageKey{}, func(ctx context.Context, after MessageKey) ([]Message, error) {
		return im.Source.Messages(ctx, after, size)
	},
		func(rows []Message) MessageKey {
			last := &rows[len(rows)-1]
			return MessageKey{SessionID: last.SessionID, Sequence: last.Sequence, ID: last.ID}
		})
	defer stop()
	for p := range messagePages {
		messages, err := p.rows, p.err
		if err != nil {
			return rep, err
		}
		if len(messages) == 0 {
			break
		}
		b := &evaluation.ImportBatch{}
		at := now()
		for i := range messages {
			m := &messages[i]
			imsg, ok, ps := MapMessage(m, numbering.Next(m.SessionID), at)
			note(ps)
			if ok {
				b.Messages = append(b.Messages, imsg)
			}
		}
		rep.Messages += len(messages)
		rep.Mapped += len(b.Messages)
		last := &messages[len(messages)-1]
		if err := write("messages", b, rep.Messages, last.ID); err != nil {
			return rep, err
		}
	}
	jobPages, stop := readAhead(ctx, "", func(ctx context.Context, after string) ([]Job, error) { return im.Source.Jobs(ctx, after, size) },
		func(rows []Job) string { return rows[len(rows)-1].ID })
	defer stop()
	for p := range jobPages {
		jobs, err := p.rows, p.err
		if err != nil {
			return rep, err
		}
		if len(jobs) == 0 {
			break
		}
		b := &evaluation.ImportBatch{}
		at := now()
		for i := range jobs {
			it, ok, ps := MapJob(&jobs[i], versions, at)
			note(ps)
			if ok {
				b.Transcripts = append(b.Transcripts, it)
			}
		}
		rep.Jobs += len(jobs)
		rep.Mapped += len(b.Transcripts)
		after := jobs[len(jobs)-1].ID
		if err := write("transcripts", b, rep.Jobs, after); err != nil {
			return rep, err
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// Kinds lists the problem kinds of a report, most frequent first.
func (r *Report) Kinds() []string {
	kinds := make([]string, 0, len(r.ProblemCounts))
	for k := range r.ProblemCounts {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if r.ProblemCounts[kinds[i]] != r.ProblemCounts[kinds[j]] {
			return r.ProblemCounts[kinds[i]] > r.ProblemCounts[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	return kinds
}

// page is a page of source rows, or the error reading it.
type page[T any] struct {
	rows []T
	err  error
}

// readAhead reads pages of the source one ahead of the writer: the next
// page is read while the last one is written, so reading the source and
// writing the target overlap, and at most two pages are held. The channel
// ends after an empty page or an error; stop ends the reading early.
func readAhead[T, K any](ctx context.Context, after K, read func(context.Context, K) ([]T, error), next func([]T) K) (<-chan page[T], func()) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan page[T], 1)
	go func() {
		defer close(ch)
		for {
			rows, err := read(ctx, after)
			select {
			case ch <- page[T]{rows, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || len(rows) == 0 {
				return
			}
			after = next(rows)
		}
	}()
	return ch, cancel
}
