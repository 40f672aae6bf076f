package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Source is a set of SIP files to sync: what a folder or a git commit holds.
type Source struct {
	Files []File
	// Load, when Files is nil, reads the files on demand, so that syncing
	// the commit the registry already holds reads nothing.
	Load func(ctx context.Context) ([]File, error)
	// Commit is the git commit the files come from ("" for a folder).
	Commit string
	// Name describes the source for the log, e.g. "git https://…@main".
	Name string
	// Dir is the SIP folder the files' paths are in (DefaultDir when
	// empty): a file outside it is refused.
	Dir string
	// Configure, when set, adjusts validation before the sync checks the
	// files: a repository's policy (rule severities, trusted issuers,
	// sections), so the registry refuses what the pull request check does.
	Configure func(*Options)
}

// Change is one SIP a sync writes: its new entry and its file content.
type Change struct {
	Entry   *Entry
	Content []byte
	// NewVersion is set when the content differs from the stored version,
	// so a version row is recorded.
	NewVersion bool
}

// Plan is what a sync will write, computed from the registry at
// BaseGeneration. Stores apply it in one transaction.
type Plan struct {
	BaseGeneration int64
	BaseCommit     string
	Commit         string
	Source         string
	At             time.Time
	Added          []*Change
	Changed        []*Change
	Deprecated     []string // ids whose files disappeared
	Unchanged      []string
}

// Empty reports whether applying the plan would change nothing: no SIP
// changes, and no new commit to record.
func (p *Plan) Empty() bool {
	return len(p.Added) == 0 && len(p.Changed) == 0 && len(p.Deprecated) == 0 &&
		(p.Commit == "" || p.Commit == p.BaseCommit)
}

// SyncReport says what a sync did (or, when it was refused, would have done).
type SyncReport struct {
	Commit     string    `json:"commit"`
	Source     string    `json:"source"`
	Applied    bool      `json:"applied"`
	Added      []string  `json:"added"`
	Changed    []string  `json:"changed"`
	Deprecated []string  `json:"deprecated"`
	Unchanged  []string  `json:"unchanged"`
	Problems   []Problem `json:"problems"`
	// UpToDate is set when the registry already held this commit, so
	// nothing was read or compared.
	UpToDate bool `json:"up_to_date"`
}

func reportOf(p *Plan) *SyncReport {
	r := &SyncReport{Commit: p.Commit, Source: p.Source, Added: []string{}, Changed: []string{},
		Deprecated: slices.Clone(p.Deprecated), Unchanged: slices.Clone(p.Unchanged), Problems: []Problem{}}
	for _, c := range p.Added {
		r.Added = append(r.Added, c.Entry.ID)
	}
	for _, c := range p.Changed {
		r.Changed = append(r.Changed, c.Entry.ID)
	}
	if r.Deprecated == nil {
		r.Deprecated = []string{}
	}
	if r.Unchanged == nil {
		r.Unchanged = []string{}
	}
	return r
}

// maxReplans bounds how often a sync plans again after other syncs landed
// first (each of them made progress).
const maxReplans = 32

// Sync validates src and applies it to the store in one transaction. A set
// with errors is not applied: the report lists the problems and the error
// is a *ValidationError. When another sync lands first, Sync plans again
// on top of it.
func Sync(ctx context.Context, store Store, src Source, now time.Time) (*SyncReport, error) {
	if src.Commit != "" {
		// A commit's content never changes: if the registry holds it,
		// there is nothing to read.
		state, err := store.SyncState(ctx)
		if err != nil {
			return nil, err
		}
		if state.CommitSHA == src.Commit {
			return &SyncReport{Commit: src.Commit, Source: src.Name, UpToDate: true, Added: []string{}, Changed: []string{},
				Deprecated: []string{}, Unchanged: []string{}, Problems: []Problem{}}, nil
		}
	}
	if src.Files == nil && src.Load != nil {
		files, err := src.Load(ctx)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", src.Name, err)
		}
		src.Files = files
	}
	if len(src.Files) == 0 {
		// A wrong folder or ref must not deprecate the whole registry.
		return nil, fmt.Errorf("%s holds no SIP file; refusing to deprecate every SIP: %w", src.Name, ErrEmptySource)
	}
	for attempt := 0; ; attempt++ {
		plan, problems, err := PlanSync(ctx, store, src, now)
		if err != nil {
			return nil, err
		}
		report := reportOf(plan)
		report.Problems = append(report.Problems, problems...)
		if errs, _ := Count(problems); errs > 0 {
			return report, &ValidationError{Problems: problems}
		}
		if plan.Empty() {
			return report, nil
		}
		err = store.Apply(ctx, plan)
		// A conflict means another sync applied meanwhile: progress, so
		// planning again cannot livelock. n syncs at once overtake one
		// another at most n-1 times; past maxReplans the sync gives up.
		if errors.Is(err, ErrConflict) && attempt < maxReplans {
			continue
		}
		if err != nil {
			return report, fmt.Errorf("sync %s: %w", src.Name, err)
		}
		report.Applied = true
		return report, nil
	}
}

// PlanSync computes what syncing src would change, with every problem of
// the new set. The engine checks the whole set, plus the edit rules of each
// changed SIP against the version the registry holds (a file that
// disappeared is deprecated, not an error). Files whose content the
// registry already holds at the same path are not parsed again.
func PlanSync(ctx context.Context, store Store, src Source, now time.Time) (*Plan, []Problem, error) {
	state, err := store.SyncState(ctx)
	if err != nil {
		return nil, nil, err
	}
	current, err := store.Heads(ctx)
	if err != nil {
		return nil, nil, err
	}
	plan := &Plan{BaseGeneration: state.Generation, BaseCommit: state.CommitSHA, Commit: src.Commit, Source: src.Name, At: now.UTC()}
	byPath := map[string]*Head{}
	byID := map[string]*Head{}
	byNumber := map[int]*Head{}
	for i := range current {
		e := &current[i]
		byID[e.ID] = e
		byNumber[e.Number] = e
		if !e.Removed {
			byPath[e.Path] = e
		}
	}

	// Unchanged files become documents straight from the registry.
	docs := make([]*Document, len(src.Files))
	var toParse []File
	var toParseAt []int
	for i, f := range src.Files {
		sum := sha256.Sum256(f.Content)
		if e := byPath[f.Path]; e != nil && e.ContentSHA256 == hex.EncodeToString(sum[:]) {
			docs[i] = documentOf(e)
			continue
		}
		toParse = append(toParse, f)
		toParseAt = append(toParseAt, i)
	}
	for j, d := range ParseFiles(toParse) {
		docs[toParseAt[j]] = d
	}

	// The base for the edit rules: the stored version of every SIP that
	// changed, matched by path or id.
	base := &Snapshot{Name: "the registry"}
	if state.CommitSHA != "" {
		base.Name = "the registry (" + short(state.CommitSHA) + ")"
	}
	for _, d := range docs {
		if d.unchanged {
			continue
		}
		e := byPath[d.Path]
		if e == nil && d.SIP != nil {
			e = byID[d.SIP.ID]
		}
		if e == nil {
			continue
		}
		content, err := store.Content(ctx, e.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("read stored %s: %w", e.ID, err)
		}
		base.Docs = append(base.Docs, Parse(e.Path, content))
	}

	dir := src.Dir
	if dir == "" {
		dir = DefaultDir
	}
	opts := Options{Base: base, Dir: dir}
	if src.Configure != nil {
		src.Configure(&opts)
	}
	problems := Validate(docs, opts)
	seen := map[string]bool{}
	for _, d := range docs {
		if d.SIP == nil {
			continue
		}
		s := d.SIP
		// Numbers of removed SIPs stay theirs: results and links name them.
		if e := byNumber[s.Number]; e != nil && e.Removed && e.ID != s.ID {
			problems = append(problems, removedNumberProblem(d, e.ID))
		}
		seen[s.ID] = true
		if d.unchanged {
			plan.Unchanged = append(plan.Unchanged, s.ID)
			continue
		}
		entry := entryOf(d)
		change := &Change{Entry: entry, Content: d.raw, NewVersion: true}
		if old := byID[s.ID]; old != nil {
			change.NewVersion = old.ContentSHA256 != d.SHA256()
			plan.Changed = append(plan.Changed, change)
		} else {
			plan.Added = append(plan.Added, change)
		}
	}
	for _, e := range current {
		if !e.Removed && !seen[e.ID] {
			plan.Deprecated = append(plan.Deprecated, e.ID)
		}
	}
	SortProblems(problems)
	slices.Sort(plan.Unchanged)
	slices.Sort(plan.Deprecated)
	return plan, problems, nil
}

// documentOf stands a stored entry in for its unchanged file, with the
// fields the repository rules read.
func documentOf(h *Head) *Document {
	s := &SIP{Number: h.Number, ID: h.ID, Type: h.Type, Status: h.Status, Prerequisites: h.Prerequisites}
	d := &Document{Path: h.Path, SIP: s, spans: map[string]Span{}, unchanged: true}
	d.sha256.Store(&h.ContentSHA256)
	return d
}

// entryOf is the entry a parsed document becomes.
func entryOf(d *Document) *Entry {
	return &Entry{
		SIP:           *d.SIP,
		Path:          d.Path,
		Body:          d.Body(),
		RawConfig:     d.RawConfig(),
		ContentSHA256: d.SHA256(),
	}
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
