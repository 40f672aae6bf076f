package api

import (
	"bytes"
	"html/template"
	"sync"

	"github.com/sipregistry/sip/registry"
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
// javascript: or data: links, styles. A body over one of
// registry.CheckBody's limits, which goldmark would take seconds or
// gigabytes to parse, is shown as preformatted text instead. Renderings
// of the catalog's SIPs are cached by the content's hash, up to
// maxRenderCache entries and maxRenderCacheBytes of HTML.
type markdown struct {
	md    goldmark.Markdown
	mu    sync.Mutex
	cache map[string]template.HTML
	size  int // bytes of HTML in cache
	limit int // most bytes of HTML the cache holds
}

const (
	maxRenderCache      = 10_000
	maxRenderCacheBytes = 64 << 20
)

func newMarkdown() *markdown {
	return &markdown{
		md: goldmark.New(
			goldmark.WithExtensions(extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
				extension.Strikethrough, extension.Linkify, extension.TaskList),
			goldmark.WithParserOptions(parser.WithAutoHeadingID(),
				parser.WithASTTransformers(util.Prioritized(demoteHeadings{}, 100))),
		),
		cache: map[string]template.HTML{},
		limit: maxRenderCacheBytes,
	}
}

// render returns the sanitised HTML of a SIP body; key identifies the
// content (its SHA-256), and an empty key (a draft's preview, text that
// is not a SIP) keeps the rendering out of the cache.
func (m *markdown) render(key, src string) template.HTML {
	if key != "" {
		m.mu.Lock()
		h, ok := m.cache[key]
		m.mu.Unlock()
		if ok {
			return h
		}
	}
	h := m.convert([]byte(src))
	if key == "" || len(h) > m.limit/16 {
		return h
	}
	m.mu.Lock()
	if len(m.cache) >= maxRenderCache || m.size+len(h) > m.limit {
		m.cache, m.size = map[string]template.HTML{}, 0
	}
	if _, ok := m.cache[key]; !ok {
		m.cache[key] = h
		m.size += len(h)
	}
	m.mu.Unlock()
	return h
}

// convert renders src, or escapes it as preformatted text when goldmark
// cannot parse it in time and memory proportional to its size.
func (m *markdown) convert(src []byte) template.HTML {
	if registry.CheckBody(src) != nil {
		return preformatted(src)
	}
	var buf bytes.Buffer
	if err := m.md.Convert(src, &buf); err != nil {
		return preformatted(src)
	}
	return template.HTML(sanitizeHTML(buf.Bytes())) // #nosec: sanitised here
}

// preformatted is src as escaped text in a pre element.
func preformatted(src []byte) template.HTML {
	var buf bytes.Buffer
	buf.Grow(len(src) + len(src)/8 + 16)
	buf.WriteString("<pre>")
	template.HTMLEscape(&buf, src)
	buf.WriteString("</pre>")
	return template.HTML(buf.String()) // #nosec: escaped here
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
