package registry

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// proseParagraphs spares the outline the inline parsing of paragraphs it
// has nothing to read in, most of a SIP's body: a paragraph without '[',
// '`' or '<' cannot hold a link, a code span or raw HTML (images and
// link references start with '[' too, autolinks with '<'), and the
// outline reads nothing else inside paragraphs. Such a paragraph is
// replaced by a prose node that goldmark treats as raw, as the table
// extension replaces a paragraph by a table; the tree keeps its shape.
//
// It runs after the other paragraph transformers (tables, link
// reference definitions), on what they leave of a paragraph. A
// paragraph is also transformed just before a setext heading's bar
// turns it into the heading, and a paragraph replaced there would stay
// a paragraph; so one is left alone whenever the line being read could
// be such a bar, even inside quotes or list items.
type proseParagraphs struct{}

func (proseParagraphs) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() == 0 {
		return
	}
	// From the first line to the last: between lines there are only
	// the prefixes of the containers (quote marks, indentation).
	src := reader.Source()
	text := src[lines.At(0).Start:lines.At(lines.Len()-1).Stop]
	if bytes.IndexByte(text, '[') >= 0 || bytes.IndexByte(text, '`') >= 0 || bytes.IndexByte(text, '<') >= 0 {
		return
	}
	if _, at := reader.Position(); mayBeSetextBar(src, at.Start) {
		return
	}
	prose := &prose{}
	prose.SetLines(lines)
	prose.SetPos(node.Pos())
	prose.SetBlankPreviousLines(node.HasBlankPreviousLines())
	node.Parent().ReplaceChild(node.Parent(), node, prose)
}

// mayBeSetextBar reports whether the line holding offset at could
// underline a setext heading: nothing on it but '-' or '=' after
// container markers (quote marks, list bullets and numbers) and spaces.
func mayBeSetextBar(src []byte, at int) bool {
	if at > len(src) {
		at = len(src)
	}
	start := bytes.LastIndexByte(src[:max(at, 0)], '\n') + 1
	bar := false
	for _, c := range src[start:] {
		switch {
		case c == '\n':
			return bar
		case c == '-' || c == '=':
			bar = true
		case c == ' ' || c == '\t' || c == '\r' || c == '>' || c == '*' || c == '+' || c == '.' || c == ')' || c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return bar
}

// prose is a paragraph the outline does not read; it is never inline
// parsed.
type prose struct {
	ast.BaseBlock
}

var kindProse = ast.NewNodeKind("Prose")

func (*prose) Kind() ast.NodeKind { return kindProse }
func (*prose) IsRaw() bool        { return true }
func (n *prose) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, nil, nil)
}
