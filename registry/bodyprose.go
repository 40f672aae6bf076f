package registry

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// outlineParser parses SIP bodies for the outline as goldmark with the
// table and strikethrough extensions does (what GitHub renders), with
// one paragraph transformer, outlineParagraphs, in place of goldmark's
// link reference definitions and the table extension's, so that most
// paragraphs are looked at once instead of three times and are never
// inline parsed.
var outlineParser = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithInlineParsers(append(parser.DefaultInlineParsers(),
		util.Prioritized(extension.NewStrikethroughParser(), 500))...),
	parser.WithParagraphTransformers(util.Prioritized(outlineParagraphs{}, 100)),
	parser.WithASTTransformers(util.Prioritized(extension.NewTableASTTransformer(), 0)),
)

var (
	linkReferences = parser.LinkReferenceParagraphTransformer
	tables         = extension.NewTableParagraphTransformer()
)

// outlineParagraphs does, on each paragraph, what goldmark's paragraph
// transformers do, in their order (link reference definitions, then
// tables), skipping each where it cannot apply; then it spares the
// outline the inline parsing of the paragraphs it has nothing to read
// in, most of a SIP's body.
//
//   - A link reference definition starts with '['; without one in the
//     paragraph, goldmark's transformer changes nothing (unless the
//     paragraph has no lines, when it removes it).
//   - A table needs a delimiter row below its first line, which starts,
//     after spaces, with '|', '-' or ':'; without such a line the table
//     transformer changes nothing.
//   - A paragraph without '[', '`' or '<' cannot hold a link, a code
//     span or raw HTML (images and references to link definitions start
//     with '[' too, autolinks with '<'), and the outline reads nothing
//     else inside paragraphs. It is replaced by a prose node that
//     goldmark treats as raw, as the table extension replaces a
//     paragraph by a table: the tree keeps its shape. A paragraph is
//     also transformed just before a setext heading's bar turns it into
//     the heading, and one replaced there would stay a paragraph; so a
//     paragraph is left alone whenever the line being read could be such
//     a bar, even inside quotes or list items.
type outlineParagraphs struct{}

func (outlineParagraphs) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() == 0 {
		linkReferences.Transform(node, reader, pc)
		return
	}
	// From the first line to the last: between lines there are only
	// the prefixes of the containers (quote marks, indentation).
	src := reader.Source()
	span := src[lines.At(0).Start:lines.At(lines.Len()-1).Stop]
	if bytes.IndexByte(span, '[') >= 0 {
		if linkReferences.Transform(node, reader, pc); node.Parent() == nil {
			return
		}
		lines = node.Lines()
	}
	if mayHoldTable(src, lines) {
		if tables.Transform(node, reader, pc); node.Parent() == nil {
			return
		}
		lines = node.Lines()
	}
	if lines.Len() == 0 {
		return
	}
	span = src[lines.At(0).Start:lines.At(lines.Len()-1).Stop]
	if bytes.IndexByte(span, '[') >= 0 || bytes.IndexByte(span, '`') >= 0 || bytes.IndexByte(span, '<') >= 0 {
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

// mayHoldTable reports whether a line after the first could be a table's
// delimiter row: its first character other than a space or tab is '|',
// '-' or ':'.
func mayHoldTable(src []byte, lines *text.Segments) bool {
	for i := 1; i < lines.Len(); i++ {
		seg := lines.At(i)
		for _, c := range src[seg.Start:seg.Stop] {
			if c == ' ' || c == '\t' {
				continue
			}
			if c == '|' || c == '-' || c == ':' {
				return true
			}
			break
		}
	}
	return false
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
