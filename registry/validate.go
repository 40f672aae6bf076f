package registry

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/sipregistry/sip/registry/seal"
)

// Options selects the rules beyond a plain repository check.
type Options struct {
	// Base, when set, is the same repository at the base revision; the
	// edit rules compare against it.
	Base *Snapshot
	// Claimed maps SIP numbers claimed elsewhere to who claims them, e.g.
	// "pull request #12": the App passes the numbers added by open pull
	// requests opened before the one it checks, so the earliest keeps a
	// number and later ones are told the next free one.
	Claimed map[int]string
	// Dir, when set, is the SIP folder the paths are in (as they are
	// read, e.g. "evaluations"): a file anywhere else is refused
	// (file-location). Validating loose files leaves it empty.
	Dir string
	// Key, when set, is the registry's sealing key: every sealed answer
	// must open with it, for its own SIP and question as written, to one
	// of the choices (sealed-answer-invalid). Without it sealed answers
	// are checked for their shape only.
	Key Opener
	// ShowSealed says the reader may learn about individual sealed
	// answers (whoever holds the key, e.g. `sip validate --sealing-key`):
	// each failing answer gets its own problem and reason. Otherwise (the
	// pull-request check) a SIP whose sealed answers fail gets one problem
	// that is the same whichever answer fails and why (SealedUniform).
	ShowSealed bool
	// Users, when set, says which GitHub logins exist (lower case →
	// exists): an @handle in an author field that it maps to false is an
	// error (author-unknown). The App looks up the handles of the SIPs a
	// pull request touches.
	Users map[string]bool
	// Body configures the body rules (sections per type, which files
	// exist for links).
	Body BodyOptions
	// TrustedIssuers, when not nil, are the credential issuers the
	// repository's policy trusts (`trusted_issuers`): a credential
	// prerequisite naming another is an error (credential-issuer-untrusted).
	TrustedIssuers []string
	// Severity overrides rules' severities (a repository's `rules` in
	// its policy file, or `sip validate --config`): error, warning, or off
	// to drop the rule's problems.
	Severity map[string]string
	// Reported, when set, says which files' problems are wanted (`sip
	// validate FILE` wants FILE's, not those of the SIPs beside it, which
	// it reads for their numbers, ids, prerequisites and anchors). The
	// other files' own rules do not run and no problem of theirs is
	// returned; the rules across files still see every file.
	Reported func(path string) bool
}

// reported says whether the problems of the file at path are wanted.
func (o Options) reported(path string) bool {
	return o.Reported == nil || o.Reported(path)
}

// Opener opens sealed answers for what they were sealed for (package
// seal's Key is one). ValidateFiles calls it from several goroutines at
// once.
type Opener interface {
	Open(b seal.Binding, sealed string) (string, error)
}

// Snapshot is a set of parsed SIP documents at one revision.
type Snapshot struct {
	Name string // for messages, e.g. "origin/main" or "base a1b2c3d"
	Docs []*Document
}

// Validate checks a whole repository view: every file's own problems, then
// the rules across files, then the edit rules against opts.Base and the
// numbers claimed elsewhere. Problems come back in their stable order.
// The documents keep everything parsed; ValidateFiles checks files that
// are not needed afterwards in less memory.
func Validate(docs []*Document, opts Options) []Problem {
	// Decide "first" by path, never by the order files were read in.
	docs = slices.SortedStableFunc(slices.Values(docs), func(a, b *Document) int { return strings.Compare(a.Path, b.Path) })
	byPath := make(map[string]*Document, len(docs))
	for _, d := range docs {
		byPath[d.Path] = d
	}
	anchorsOf := func(p string) (map[string]bool, bool) {
		if d, ok := byPath[p]; ok {
			return d.outline().anchors, true
		}
		return nil, false
	}
	var out []Problem
	for _, d := range docs {
		if opts.reported(d.Path) {
			out = append(out, fileProblems(d, anchorsOf, opts)...)
		}
	}
	return acrossFiles(docs, opts, out...)
}

// fileProblems are the problems of one file that need no other file but
// the anchors of those its links point to (none of the links are checked
// when anchorsOf is nil).
func fileProblems(d *Document, anchorsOf anchorLookup, opts Options) []Problem {
	out := slices.Clip(d.Problems)
	if opts.Dir != "" && !Placed(opts.Dir, d.Path) {
		want := path.Join(opts.Dir, path.Base(d.Path))
		if d.SIP != nil && d.SIP.Number > 0 {
			want = path.Join(opts.Dir, FileName(d.SIP.Number))
		}
		dir := path.Clean(opts.Dir)
		out = append(out, problemAt(d, fileSpan, SeverityError, "file-location", "Move it to "+want+".",
			"%s is not directly in %s/: a SIP is %s/SIP-<N>.md, and nothing in a subfolder is a SIP", d.Path, dir, dir))
	}
	out = append(out, authorProblems(d, opts.Users)...)
	out = append(out, untrustedIssuers(d, opts.TrustedIssuers)...)
	out = append(out, bodyProblems(d, anchorsOf, opts.Body)...)
	if opts.Key != nil {
		out = append(out, sealedProblems(d, opts.Key, opts.ShowSealed)...)
	}
	return out
}

// acrossFiles runs the rules across files (numbers, ids, prerequisites),
// the edit rules and the claimed numbers on docs in path order, then
// applies the repository's severities and sorts own, the files' own
// problems, in with them.
func acrossFiles(docs []*Document, opts Options, own ...Problem) []Problem {
	return acrossFilesAfter(docs, opts, [][]Problem{own}, len(own))
}

// acrossFilesAfter is acrossFiles after the problems of own, in turn,
// which hold n; the result is allocated once, at its size.
func acrossFilesAfter(docs []*Document, opts Options, own [][]Problem, n int) []Problem {
	repo := repositoryProblems(docs)
	var edit []Problem
	if opts.Base != nil {
		edit = editProblems(opts.Base, docs)
	}
	collisions := collisionProblems(opts, docs)
	out := make([]Problem, 0, n+len(repo)+len(edit)+len(collisions))
	for _, ps := range own {
		out = append(out, ps...)
	}
	out = append(out, repo...)
	out = append(out, edit...)
	out = append(out, collisions...)
	out = applySeverity(out, opts.Severity)
	if opts.Reported != nil {
		out = slices.DeleteFunc(out, func(p Problem) bool { return !opts.Reported(p.Path) })
	}
	SortProblems(out)
	return out
}

// ValidateFiles parses files and checks them as Validate checks their
// documents, with the same problems in the same order, in memory that
// does not grow with what the files hold: each file's own rules run as
// soon as it is parsed, on every CPU, and only what the rules across
// files read (number, id, type, status, prerequisites and where they are
// written, heading anchors) is kept. The edit rules compare whole
// documents, so with opts.Base it parses and keeps everything.
func ValidateFiles(files []File, opts Options) []Problem {
	if opts.Base != nil {
		return Validate(ParseFiles(files), opts)
	}
	// Files in path order, the last of a path standing for it, as in Validate.
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(files[a].Path, files[b].Path) })
	last := make(map[string]int, len(files))
	for _, i := range order {
		last[files[i].Path] = i
	}
	docs := make([]*Document, len(files))
	own := make([][]Problem, len(files))
	later := make([]bool, len(files)) // links into other SIP files, checked once all are parsed
	each(len(files), func(i int) {
		if !opts.reported(files[i].Path) {
			// Read for the rules across files only: its anchors are
			// read if a reported file links to them.
			docs[i] = parse(files[i].Path, files[i].Content, false).sideFacts()
			return
		}
		d := Parse(files[i].Path, files[i].Content)
		if hasBody(d) && linksElsewhere(d, d.outline(), last, opts.Body) {
			later[i] = true
			own[i] = fileProblems(d, nil, opts)
		} else {
			// No link needs another file's anchors; only whether a
			// path is a SIP file matters.
			own[i] = fileProblems(d, func(p string) (map[string]bool, bool) {
				_, ok := last[p]
				return nil, ok
			}, opts)
		}
		docs[i] = d.facts(later[i])
	})
	anchorsOf := func(p string) (map[string]bool, bool) {
		if i, ok := last[p]; ok {
			return docs[i].outline().anchors, true
		}
		return nil, false
	}
	sorted := make([]*Document, len(order))
	parts := make([][]Problem, 0, len(order))
	n := 0
	for k, i := range order {
		sorted[k] = docs[i]
		parts = append(parts, own[i])
		n += len(own[i])
		if later[i] {
			links := checkLinks(docs[i], docs[i].body, anchorsOf, opts.Body)
			parts = append(parts, links)
			n += len(links)
		}
	}
	return acrossFilesAfter(sorted, opts, parts, n)
}

// facts is what the rules across files read of d: its path, where its
// frontmatter opens, its number, id, type, status and prerequisites and
// where they are written, and its heading anchors (with its links when
// keepLinks, for checking them once every file is parsed). The file's
// bytes, config, spans of other fields and the rest of its outline are
// left behind for the collector.
func (d *Document) facts(keepLinks bool) *Document {
	f := d.bare()
	f.body = &outline{}
	if d.content != nil {
		o := d.outline()
		f.body.anchors = o.anchors
		if keepLinks {
			f.body.links = o.links
		}
	}
	return f
}

// sideFacts is facts for a file whose problems are not reported: its
// anchors are read from its body only if a link of a reported file asks
// for them, so the body is kept instead of its outline.
func (d *Document) sideFacts() *Document {
	f := d.bare()
	if d.content != nil {
		f.content, f.bodyStart = d.content, d.bodyStart
	} else {
		f.body = &outline{}
	}
	return f
}

// bare is d's path, frontmatter line, and the fields and spans the rules
// across files read.
func (d *Document) bare() *Document {
	f := &Document{Path: d.Path, fmLine: d.fmLine, prereqAt: d.prereqAt}
	if d.SIP != nil {
		f.SIP = &SIP{Number: d.SIP.Number, ID: d.SIP.ID, Type: d.SIP.Type, Status: d.SIP.Status, Prerequisites: d.SIP.Prerequisites}
		f.spans = make(map[string]Span, 3)
		for _, k := range [...]string{"sip", "id", "prerequisites"} {
			if s, ok := d.spans[k]; ok {
				f.spans[k] = s
			}
		}
	}
	return f
}

// applySeverity gives problems the severity a repository set for their
// rule, dropping those of rules it turned off.
func applySeverity(ps []Problem, sev map[string]string) []Problem {
	if len(sev) == 0 {
		return ps
	}
	out := ps[:0]
	for _, p := range ps {
		switch sev[p.Rule] {
		case "off":
			continue
		case "error":
			p.Severity = SeverityError
		case "warning":
			p.Severity = SeverityWarning
		}
		out = append(out, p)
	}
	return out
}

// FileName is the file name a SIP with number n must have.
func FileName(n int) string { return "SIP-" + strconv.Itoa(n) + ".md" }

func repositoryProblems(docs []*Document) []Problem {
	var out []Problem
	byNumber := map[int][]*Document{}
	byID := map[string][]*Document{}
	for _, d := range docs {
		if d.SIP == nil {
			continue
		}
		if n := d.SIP.Number; n > 0 {
			byNumber[n] = append(byNumber[n], d)
			if want := FileName(n); path.Base(d.Path) != want {
				out = append(out, problemAt(d, d.Span("sip"), SeverityError, "file-name-mismatch",
					"Rename the file to "+want+", or correct sip.",
					"file %s declares sip %d; it must be named %s", path.Base(d.Path), n, want))
			}
		}
		if d.SIP.ID != "" {
			byID[d.SIP.ID] = append(byID[d.SIP.ID], d)
		}
	}
	for n, group := range byNumber {
		for _, d := range group {
			if others := otherPlaces(group, d, "sip"); others != "" {
				out = append(out, problemAt(d, d.Span("sip"), SeverityError, "sip-duplicate",
					"Take a free number; `sip new` picks the next one.", "SIP number %d is also used by %s", n, others))
			}
		}
	}
	for id, group := range byID {
		for _, d := range group {
			if others := otherPlaces(group, d, "id"); others != "" {
				out = append(out, problemAt(d, d.Span("id"), SeverityError, "id-duplicate",
					"Choose an id no other SIP uses.", "id %q is also used by %s", id, others))
			}
		}
	}
	out = append(out, prerequisiteProblems(docs, byID)...)
	return out
}

// maxOthers is how many other places a duplicate's problem names: a
// group of n duplicates costs n problems of bounded size, not n².
const maxOthers = 3

// otherPlaces names the first few other members of a duplicate group (in
// path order) and counts the rest.
func otherPlaces(group []*Document, self *Document, field string) string {
	var places []string
	for _, o := range group {
		if o == self {
			continue
		}
		if len(places) == maxOthers {
			break
		}
		places = append(places, fmt.Sprintf("%s:%d", o.Path, o.Span(field).Line))
	}
	if more := len(group) - 1 - len(places); more > 0 {
		return strings.Join(places, ", ") + " and " + groupDigits(more) + " more"
	}
	return strings.Join(places, ", ")
}

// groupDigits writes n with thousands separated by commas.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func prerequisiteProblems(docs []*Document, byID map[string][]*Document) []Problem {
	var out []Problem
	byNumber := map[int]string{}
	var ids []string
	for id, g := range byID {
		ids = append(ids, id)
		byNumber[g[0].SIP.Number] = id
	}
	slices.Sort(ids)
	for _, d := range docs {
		if d.SIP == nil {
			continue
		}
		seen := map[string]bool{}
		for i, p := range d.SIP.Prerequisites {
			at := d.prereqSpan(i)
			if seen[p] {
				out = append(out, problemAt(d, at, SeverityWarning, "prerequisite-duplicate", "Remove the repeated entry.",
					"prerequisite %q is listed more than once", p))
				continue
			}
			seen[p] = true
			if p == d.SIP.ID {
				out = append(out, selfCycleProblem(d, at))
				continue
			}
			target, ok := byID[p]
			if !ok {
				hint := "Prerequisites are evaluation ids, e.g. `poaw`."
				if id := guessID(p, byNumber, ids); id != "" {
					hint = "Did you mean " + id + "?"
				}
				out = append(out, problemAt(d, at, SeverityError, "prerequisite-missing", hint,
					"prerequisite %q is not the id of any SIP", p))
				continue
			}
			t := target[0].SIP
			switch {
			case !t.Type.IsEvaluation() && t.Type != "":
				out = append(out, problemAt(d, at, SeverityError, "prerequisite-status", "Require evaluations only.",
					"prerequisite %q is a process SIP, which nobody can pass", p))
			case d.SIP.Status == StatusActive && (t.Status == StatusDraft || t.Status == StatusDeprecated):
				out = append(out, problemAt(d, at, SeverityError, "prerequisite-status",
					"Activate "+p+" first, or keep this SIP in draft.",
					"active SIP requires %q, which is %s", p, t.Status))
			}
		}
	}
	out = append(out, cycleProblems(docs, byID)...)
	return out
}

// guessID maps a mistaken prerequisite (a number, "SIP-N", a near-miss) to
// the id it probably means.
func guessID(p string, byNumber map[int]string, ids []string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(p), "sip-"), "sip")
	if n, err := strconv.Atoi(s); err == nil {
		return byNumber[n]
	}
	return suggest(p, ids)
}

func (d *Document) prereqSpan(i int) Span {
	if i < len(d.prereqAt) {
		return d.prereqAt[i]
	}
	return d.Span("prerequisites")
}

// sealedProblems checks that each sealed answer of d opens with the key,
// for its own SIP and question as written, to one of its choices.
// Messages never hold what an answer opened to; unless show, they do not
// say which answer failed or why either (SealedUniform).
func sealedProblems(d *Document, key Opener, show bool) []Problem {
	if d.SIP == nil || d.SIP.Config.Benchmark == nil {
		return nil
	}
	var out []Problem
	for _, q := range d.SIP.Config.Benchmark.Questions {
		if q.Sealed == "" {
			continue
		}
		answer, err := key.Open(SealBinding(d.SIP, q), q.Sealed)
		switch {
		case err != nil:
			out = append(out, problemAt(d, d.AnswerSpan(q.ID), SeverityError, "sealed-answer-invalid",
				"Seal it again to the registry's public key with `sip seal` (GET /api/v1/sealing-key names the key).",
				"the sealed answer of question %q does not open: %v", q.ID, err))
		case q.MultipleChoice() && !contains(q.Choices, answer):
			out = append(out, problemAt(d, d.AnswerSpan(q.ID), SeverityError, "sealed-answer-invalid",
				"Seal the exact text of the correct choice (`sip seal` copies it from answer).",
				"the sealed answer of question %q is not one of its choices", q.ID))
		}
	}
	if len(out) > 0 && !show {
		return []Problem{problemAt(d, d.Span("config"), SeverityError, "sealed-answer-invalid",
			"Seal each answer with `sip seal` for this SIP's questions as they are written now (GET /api/v1/sealing-key names the key); maintainers holding the key see details with `sip validate --sealing-key`.",
			SealedUniform)}
	}
	return out
}
