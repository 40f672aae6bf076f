package api

import (
	"bytes"
	"html/template"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders SIP bodies, which contributors write, to HTML that is
// safe to serve: goldmark (CommonMark with GitHub's tables, task lists,
// strikethrough and autolinks) drops raw HTML and dangerous link schemes,
// and sanitizeHTML then keeps only the elements and attributes goldmark
// writes, so nothing that could run survives: no scripts, event handlers,
// javascript: or data: links, styles. Renderings are cached by the
// content's hash.
type markdown struct {
	md    goldmark.Markdown
	mu    sync.Mutex
	cache map[string]template.HTML
}

const maxRenderCache = 10_000

func newMarkdown() *markdown {
	return &markdown{
		md: goldmark.New(
			goldmark.WithExtensions(extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
				extension.Strikethrough, extension.Linkify, extension.TaskList),
			goldmark.WithParserOptions(parser.WithAutoHeadingID(),
				parser.WithASTTransformers(util.Prioritized(demoteHeadings{}, 100))),
		),
		cache: map[string]template.HTML{},
	}
}

// render returns the sanitised HTML of a SIP body; key identifies the
// content (its SHA-256).
func (m *markdown) render(key, src string) template.HTML {
	m.mu.Lock()
	if h, ok := m.cache[key]; ok && key != "" {
		m.mu.Unlock()
		return h
	}
	m.mu.Unlock()
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		buf.Reset()
		template.HTMLEscape(&buf, []byte(src))
	}
	h := template.HTML(sanitizeHTML(buf.Bytes())) // #nosec: sanitised here
	m.mu.Lock()
	if len(m.cache) >= maxRenderCache {
		m.cache = map[string]template.HTML{}
	}
	m.cache[key] = h
	m.mu.Unlock()
	return h
}

// demoteHeadings moves every heading of a SIP body one level down: the
// page's own title is its only h1.
type demoteHeadings struct{}

func (demoteHeadings) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering && h.Level < 6 {
			h.Level++
		}
		return ast.WalkContinue, nil
	})
}
