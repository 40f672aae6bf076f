package registry

import (
	"bytes"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// DefaultSections are the level-2 headings a SIP body of each kind must
// have (body-sections), from SIP-1; alternatives are separated by " | ".
// A repository sets its own per type in its policy file (`sections`).
var DefaultSections = map[Type][]string{
	TypeProcess: {"Abstract", "Motivation", "Specification", "Rationale"},
}

// defaultEvaluationSections apply to every evaluation type without its own.
// A heading matches when it starts with one of the alternatives (see
// headingKey), so "Passing Score" is a Passing section.
var defaultEvaluationSections = []string{"How it runs | Procedure | Certification process", "Passing | Scoring | Grading | Rubric"}

// maxPerRule bounds the problems one body rule reports in one file: a body
// with ten thousand broken links gets this many and a count of the rest.
const maxPerRule = 20

// outline is what the body rules read of a Markdown body.
type outline struct {
	headings []heading
	anchors  map[string]bool // GitHub's heading anchors, and explicit ids
	links    []link
	codes    []code
}

type heading struct {
	level int
	text  string
	at    Span
}

type link struct {
	dest string
	at   Span
}

// code is an inline code span, with the header of the table column it
// sits in (empty outside tables).
type code struct {
	text, column string
	at           Span
}

var explicitID = regexp.MustCompile(`(?i)<a\s+(?:name|id)\s*=\s*"([^"]+)"`)

// outlineOf reads a document's body; spans are in file lines.
func outlineOf(d *Document) *outline {
	first := bytes.Count(d.content[:d.bodyStart], []byte("\n")) // lines before the body
	return outlineOfBody(d.content[d.bodyStart:], first, outlineParser)
}

// outlineOfBody reads a Markdown body whose first line is line first+1
// of its file, as p parses it.
func outlineOfBody(src []byte, first int, p parser.Parser) *outline {
	root := p.Parse(text.NewReader(src))
	o := &outline{anchors: map[string]bool{}}
	// Line starts, found once, so that placing each node is a binary
	// search rather than a count from the top of the body.
	starts := make([]int, 1, bytes.Count(src, []byte("\n"))+1)
	for i := 0; ; {
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		starts = append(starts, i)
	}
	at := func(offset int) Span {
		i, found := slices.BinarySearch(starts, offset)
		if !found {
			i--
		}
		line := first + i + 1
		return Span{Line: line, Column: offset - starts[i] + 1, EndLine: line}
	}
	seen := map[string]int{}
	var header []string // the current table's column headers
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			t := plainText(n, src)
			off := 0
			if n.Lines().Len() > 0 {
				off = n.Lines().At(0).Start
			}
			o.headings = append(o.headings, heading{level: n.Level, text: t, at: at(lineStart(src, off))})
			slug := githubSlug(t)
			if k := seen[slug]; k > 0 {
				o.anchors[slug+"-"+itoa(k)] = true
			} else {
				o.anchors[slug] = true
			}
			seen[slug]++
		case *east.Table:
			header = nil
			if h, ok := n.FirstChild().(*east.TableHeader); ok {
				for c := h.FirstChild(); c != nil; c = c.NextSibling() {
					header = append(header, plainText(c, src))
				}
			}
		case *ast.Link:
			o.links = append(o.links, link{dest: string(n.Destination), at: at(firstOffset(n, src))})
		case *ast.CodeSpan:
			c := code{text: plainText(n, src), at: at(max(firstOffset(n, src)-1, 0))}
			if cell, ok := n.Parent().(*east.TableCell); ok {
				if _, inHeader := cell.Parent().(*east.TableHeader); !inHeader {
					if i := cellIndex(cell); i < len(header) {
						c.column = header[i]
					}
				}
			}
			o.codes = append(o.codes, c)
		case *ast.RawHTML:
			var b bytes.Buffer
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				b.Write(seg.Value(src))
			}
			for _, m := range explicitID.FindAllStringSubmatch(b.String(), -1) {
				o.anchors[m[1]] = true
			}
		case *ast.HTMLBlock:
			var b bytes.Buffer
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				b.Write(seg.Value(src))
			}
			for _, m := range explicitID.FindAllStringSubmatch(b.String(), -1) {
				o.anchors[m[1]] = true
			}
		}
		return ast.WalkContinue, nil
	})
	return o
}

func lineStart(src []byte, off int) int { return bytes.LastIndexByte(src[:off], '\n') + 1 }

// plainText is a node's text without markup.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() {
				b.WriteByte(' ')
			}
		}
		if s, ok := c.(*ast.String); ok && entering {
			b.Write(s.Value)
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}

// firstOffset is the offset of a node's first text in the source (the
// start of its line when it has none).
func firstOffset(n ast.Node, src []byte) int {
	off := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			off = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	if off >= 0 {
		return off
	}
	for p := n; p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			return p.Lines().At(0).Start
		}
	}
	return 0
}

func cellIndex(cell ast.Node) int {
	i := 0
	for c := cell.PreviousSibling(); c != nil; c = c.PreviousSibling() {
		i++
	}
	return i
}

// githubSlug is the anchor GitHub gives a heading: lower case, spaces to
// hyphens, punctuation other than hyphens and underscores dropped.
func githubSlug(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return githubSlugUnicode(s)
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		case c == ' ':
			b.WriteByte('-')
		case c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteByte(c)
		}
	}
	return b.String()
}

// githubSlugUnicode is githubSlug for headings that are not all ASCII.
func githubSlugUnicode(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// BodyOptions are what the body rules need beyond the documents.
type BodyOptions struct {
	// Sections, per type, replaces DefaultSections.
	Sections map[Type][]string
	// Exists, when set, says whether a repository path exists, for links
	// to files that are not SIPs; known is false when it cannot tell
	// (such links are then not checked). ValidateFiles calls it from
	// several goroutines at once.
	Exists func(path string) (exists, known bool)
	// Root is the repository's root as a path like the documents' (e.g.
	// "../.." when they are read from a folder below it); empty when the
	// documents' paths are relative to the root. Links starting with /
	// are resolved against it.
	Root string
}

// sectionsFor are the required sections of a type.
func (o BodyOptions) sectionsFor(t Type) []string {
	if s, ok := o.Sections[t]; ok {
		return s
	}
	if s, ok := DefaultSections[t]; ok {
		return s
	}
	if t.IsEvaluation() {
		return defaultEvaluationSections
	}
	return nil
}

// isExternal reports whether a link leaves the repository (a scheme, an
// e-mail address, or a protocol-relative URL).
func isExternal(dest string) bool {
	if strings.HasPrefix(dest, "//") {
		return true
	}
	u, err := url.Parse(dest)
	return err == nil && u.Scheme != ""
}

// resolve turns a relative link of the file at from into a repository
// path and fragment; a link starting with / starts at root.
func resolve(from, dest, root string) (target, fragment string) {
	dest, fragment, _ = strings.Cut(dest, "#")
	if p, err := url.PathUnescape(dest); err == nil {
		dest = p
	}
	if dest == "" {
		return "", fragment
	}
	if strings.HasPrefix(dest, "/") {
		return path.Join(root, strings.TrimPrefix(dest, "/")), fragment
	}
	return path.Join(path.Dir(from), dest), fragment
}

// idShape is what an evaluation's prompt or question id looks like when
// a body cites it: words joined by hyphens or underscores.
var idShape = regexp.MustCompile(`^[a-z0-9]+(?:[-_][a-z0-9]+)+$`)

// configIDs are the prompt and question ids a SIP's config defines.
func configIDs(s *SIP) []string {
	var ids []string
	if b := s.Config.Benchmark; b != nil {
		for _, q := range b.Questions {
			ids = append(ids, q.ID)
		}
	}
	if c := s.Config.Certification; c != nil {
		for _, p := range c.Prompts {
			ids = append(ids, p.ID)
		}
	}
	return slices.DeleteFunc(ids, func(s string) bool { return s == "" })
}
