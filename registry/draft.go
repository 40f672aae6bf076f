package registry

import (
	"path"
	"slices"
)

// Draft is a SIP file proposed against a registry: a new SIP or a change
// to one the registry holds.
type Draft struct {
	Content []byte
	// Path is where the file would go; empty puts it at the place its sip
	// number says (Dir/SIP-<N>.md).
	Path string
	// New says the draft proposes a new SIP: when its number's file
	// exists, the draft is checked beside it (the number is taken), not
	// as a change to it.
	New bool
}

// DraftContext is the registry a draft is checked against: the SIPs it
// holds (as the repository's files parse), the numbers it reserves, and
// the options of the repository's own check.
type DraftContext struct {
	// Name says what Docs is in messages, e.g. "the registry at a1b2c3d".
	Name string
	// Dir is the SIP folder, e.g. "evaluations".
	Dir string
	// Docs are the SIPs the registry holds now.
	Docs []*Document
	// Removed maps the numbers of SIPs whose files were removed to their
	// ids: a removed SIP's number is never reused.
	Removed map[int]string
	// Options are the repository's other options (severities, sections,
	// sealing key); Base, Claimed and Dir are set from the fields above.
	Options Options
}

// DraftCheck is what checking a draft found: its problems (those of its
// own file, as the repository's check would report them) and what merging
// it would change in the registry.
type DraftCheck struct {
	Path     string
	Problems []Problem
	Preview  DraftPreview
	// Entry is the SIP as the registry would hold it after a merge (nil
	// when the draft declares none), for showing its page.
	Entry *Entry
}

// DraftPreview is what a merge of the draft would do to the registry.
type DraftPreview struct {
	// Change is "new" (a SIP the registry does not hold), "edit" (a
	// change to one it holds), "unchanged" (the same content) or "" when
	// the draft declares no SIP.
	Change          string
	Number          int
	ID              string
	Name            string
	Type            Type
	Status          Status
	Version         string
	PreviousVersion string // the version the registry holds, for an edit
	Handler         string
	// NextNumber is the first number nobody holds or reserves: what a new
	// SIP should take.
	NextNumber    int
	Prerequisites []DraftPrerequisite
}

// DraftPrerequisite is one prerequisite of a draft and what the registry
// knows of it.
type DraftPrerequisite struct {
	ID     string
	Number int    // 0 when the registry holds no such SIP
	Name   string // empty when unknown
	Status Status // empty when unknown
}

// CheckDraft validates a draft as the repository's check would validate a
// pull request adding it: the draft's own rules, the rules across files
// against every SIP the registry holds (numbers, ids, prerequisites,
// links between SIPs), the edit rules against the registry's version of
// the same file, and collisions with reserved numbers. Only the draft's
// problems are returned; a draft is valid when none is an error.
func CheckDraft(ctx DraftContext, d Draft) DraftCheck {
	dir := path.Clean(ctx.Dir)
	if ctx.Dir == "" {
		dir = "evaluations"
	}
	p := d.Path
	if p == "" {
		probe := Parse(path.Join(dir, "SIP-draft.md"), d.Content)
		p = probe.Path
		if probe.SIP != nil && probe.SIP.Number > 0 {
			p = path.Join(dir, FileName(probe.SIP.Number))
		}
		if d.New && slices.ContainsFunc(ctx.Docs, func(b *Document) bool { return b.Path == p }) {
			p = path.Join(dir, "SIP-new.md")
		}
	}
	doc := Parse(p, d.Content)
	head := make([]*Document, 0, len(ctx.Docs)+1)
	var before *Document
	for _, b := range ctx.Docs {
		if b.Path == p {
			before = b
			continue
		}
		head = append(head, b)
	}
	head = append(head, doc)

	opts := ctx.Options
	opts.Dir = dir
	opts.Base = &Snapshot{Name: ctx.Name, Docs: ctx.Docs}
	if opts.Body.Exists == nil {
		// Every file the SIP folder's rules read is a SIP the registry
		// holds (a sync refuses a folder with a broken one), so a link to
		// another is to no file; other files are unknown here.
		held := make(map[string]bool, len(head))
		for _, h := range head {
			held[h.Path] = true
		}
		opts.Body.Exists = func(name string) (bool, bool) {
			if !Reads(dir, name) {
				return false, false
			}
			return held[name], true
		}
	}
	var out []Problem
	for _, pr := range Validate(head, opts) {
		if pr.Path == p {
			out = append(out, pr)
		}
	}
	if s := doc.SIP; s != nil {
		if id, ok := ctx.Removed[s.Number]; ok && id != s.ID {
			out = append(out, removedNumberProblem(doc, id))
			SortProblems(out)
		}
	}
	ch := DraftCheck{Path: p, Problems: out, Preview: previewDraft(ctx, doc, before, ctx.NextNumber())}
	if doc.SIP != nil {
		ch.Entry = entryOf(doc)
	}
	return ch
}

func previewDraft(ctx DraftContext, doc, before *Document, next int) DraftPreview {
	pv := DraftPreview{NextNumber: next}
	s := doc.SIP
	if s == nil {
		return pv
	}
	pv.Number, pv.ID, pv.Name, pv.Type, pv.Status, pv.Version, pv.Handler = s.Number, s.ID, s.Name, s.Type, s.Status, s.Version, s.Handler
	if pv.Handler == "" {
		if names := HandlersFor(s.Type); len(names) > 0 {
			pv.Handler = names[0]
		}
	}
	switch {
	case before == nil:
		pv.Change = "new"
	case before.SHA256() == doc.SHA256():
		pv.Change = "unchanged"
	default:
		pv.Change = "edit"
	}
	if before != nil && before.SIP != nil {
		pv.PreviousVersion = before.SIP.Version
	}
	byID := make(map[string]*SIP, len(ctx.Docs))
	for _, b := range ctx.Docs {
		if b.SIP != nil && b.SIP.ID != "" {
			byID[b.SIP.ID] = b.SIP
		}
	}
	for _, id := range s.Prerequisites {
		pr := DraftPrerequisite{ID: id}
		if b := byID[id]; b != nil {
			pr.Number, pr.Name, pr.Status = b.Number, b.Name, b.Status
		}
		pv.Prerequisites = append(pv.Prerequisites, pr)
	}
	return pv
}

// NextNumber is the first number after every number the registry holds,
// has removed, or sees claimed (Options.Claimed): what a new SIP takes.
func (ctx DraftContext) NextNumber() int {
	next := nextFree(Options{Claimed: ctx.Options.Claimed, Base: &Snapshot{Docs: ctx.Docs}}, nil)
	for n := range ctx.Removed {
		next = max(next, n+1)
	}
	return next
}

// removedNumberProblem is the problem of a SIP taking the number of the
// removed SIP id: numbers are never reused, since results and links name
// them.
func removedNumberProblem(d *Document, id string) Problem {
	return problemAt(d, d.Span("sip"), SeverityError, "sip-duplicate",
		"Take a number that no SIP, removed or not, has used.",
		"SIP number %d belongs to %q, whose file was removed; numbers are never reused", d.SIP.Number, id)
}
