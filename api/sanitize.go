package api

import (
	"bytes"
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/html"
)

// sanitizeHTML keeps, of an HTML fragment, only what goldmark writes for
// a SIP body: the elements and attributes of CommonMark with GitHub's
// tables, task lists, strikethrough and autolinks, and links and images to
// http, https, mailto or relative URLs. Every other element is unwrapped
// (its text kept, escaped), or dropped with its content when that content
// is code, styles or another document (script, style, iframe, svg, ...);
// comments and doctypes are dropped. Attribute values and text are written
// re-escaped, links get rel="nofollow noreferrer", and every element
// opened is closed, so nothing in the input can add markup of its own.
//
// It follows the rules bluemonday's user-content policy applied to the same
// HTML (and api's tests hold the two against each other), but on a fixed
// list of elements, so it needs no regular expressions; bluemonday compiled
// hundreds of them at every start of the binary.
func sanitizeHTML(src []byte) []byte {
	var (
		out    bytes.Buffer
		open   []openElement      // the elements met and not yet closed, innermost last
		opened = map[string]int{} // how many of open have each name
		skip   int                // > 0 inside an element dropped with its content
		attrs  []html.Attribute
	)
	out.Grow(len(src) + len(src)/8)
	z := html.NewTokenizer(bytes.NewReader(src))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break // io.EOF: the reader is in memory, so nothing else can fail
		}
		tok := z.Token()
		switch tt {
		case html.TextToken:
			if skip == 0 {
				out.WriteString(html.EscapeString(strings.ReplaceAll(tok.Data, "\x00", "\uFFFD")))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			if droppedWithContent(tok.Data) {
				// The tokenizer reads the content of a raw-text element as
				// text even after <script/>; skip it the same way.
				if tt == html.StartTagToken || rawText(tok.Data) {
					skip++
				}
				continue
			}
			el, known := allowedElement(tok.Data)
			if skip > 0 || !known {
				continue
			}
			attrs = sanitizeAttrs(attrs[:0], tok.Data, tok.Attr)
			keep := len(attrs) > 0 || !el.needsAttrs
			if keep {
				tok.Attr = attrs
				if el.void {
					out.WriteString(tok.String())
					continue
				}
				tok.Type = html.StartTagToken
				out.WriteString(tok.String())
			}
			if el.void {
				continue
			}
			if tt == html.SelfClosingTagToken { // <p/> opens a p in HTML
				if keep {
					writeEndTag(&out, tok.Data)
				}
				continue
			}
			open = append(open, openElement{name: tok.Data, written: keep})
			opened[tok.Data]++
		case html.EndTagToken:
			if droppedWithContent(tok.Data) {
				if skip > 0 {
					skip--
				}
				continue
			}
			if skip > 0 {
				continue
			}
			if opened[tok.Data] == 0 {
				continue // an end tag without its start, or of an element not kept
			}
			i := len(open) - 1
			for open[i].name != tok.Data {
				i--
			}
			for _, e := range open[i:] {
				opened[e.name]--
			}
			closeElements(&out, open[i:])
			open = open[:i]
		}
		// Comments and doctypes are dropped.
	}
	closeElements(&out, open)
	return out.Bytes()
}

// openElement is an element whose end tag is still to come; written is
// false for a link that lost all its attributes and so was unwrapped.
type openElement struct {
	name    string
	written bool
}

// closeElements writes the end tags of the written elements of open,
// innermost first.
func closeElements(w *bytes.Buffer, open []openElement) {
	for i := len(open) - 1; i >= 0; i-- {
		if open[i].written {
			writeEndTag(w, open[i].name)
		}
	}
}

func writeEndTag(w *bytes.Buffer, name string) {
	w.WriteString("</")
	w.WriteString(name)
	w.WriteByte('>')
}

// element is how the sanitiser treats an element it keeps.
type element struct {
	void       bool // no content and no end tag
	needsAttrs bool // dropped (unwrapped) when none of its attributes is kept
}

// allowedElement reports whether an element is kept, and how: the elements
// goldmark writes for CommonMark with the GFM extensions SIP bodies use.
func allowedElement(name string) (element, bool) {
	switch name {
	case "p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code", "em", "strong", "del",
		"ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td":
		return element{}, true
	case "a":
		return element{needsAttrs: true}, true
	case "img", "input":
		return element{void: true, needsAttrs: true}, true
	case "br", "hr":
		return element{void: true}, true
	}
	return element{}, false
}

// droppedWithContent reports whether an element is dropped with all it
// contains: code, styles, embedded documents and text meant for no reader.
func droppedWithContent(name string) bool {
	switch name {
	case "script", "style", "iframe", "noembed", "noframes", "noscript", "plaintext", "textarea", "title", "xmp",
		"object", "applet", "frameset", "template", "svg", "math", "select", "audio", "video", "canvas", "head":
		return true
	}
	return false
}

// rawText reports whether the tokenizer reads an element's content as text
// up to its end tag.
func rawText(name string) bool {
	switch name {
	case "script", "style", "iframe", "noembed", "noframes", "noscript", "plaintext", "textarea", "title", "xmp":
		return true
	}
	return false
}

// sanitizeAttrs appends to dst the attributes of element name that are kept,
// with their values as they are to be written: the first of each name, if
// allowed on the element and its value passes. A link with an href gets
// rel="nofollow noreferrer"; an input is kept only as a checkbox.
func sanitizeAttrs(dst []html.Attribute, name string, attrs []html.Attribute) []html.Attribute {
	var href, checkbox bool
	kept := len(dst)
	for _, a := range attrs {
		v, ok := attrValue(name, a.Key, a.Val)
		if !ok || a.Namespace != "" || seenBefore(dst[kept:], a.Key) {
			continue
		}
		href = href || name == "a" && a.Key == "href"
		checkbox = checkbox || name == "input" && a.Key == "type"
		dst = append(dst, html.Attribute{Key: a.Key, Val: v})
	}
	if name == "input" && !checkbox {
		return dst[:kept]
	}
	if href {
		dst = append(dst, html.Attribute{Key: "rel", Val: "nofollow noreferrer"})
	}
	return dst
}

// seenBefore reports whether key is among the attributes kept so far: at
// most the few an element may have, so the check stays linear in the input.
func seenBefore(attrs []html.Attribute, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

// attrValue returns the value to write for attribute key of element name,
// and whether the attribute is kept.
func attrValue(name, key, val string) (string, bool) {
	switch name + " " + key {
	case "a href", "img src":
		return safeURL(val)
	case "a title", "img title", "img alt":
		return val, isPlainText(val)
	case "h1 id", "h2 id", "h3 id", "h4 id", "h5 id", "h6 id":
		return val, isHeadingID(val) && !pageIDs[val]
	case "th align", "td align":
		return val, val == "left" || val == "right" || val == "center"
	case "ol start":
		return val, len(val) > 0 && len(val) <= 9 && strings.Trim(val, "0123456789") == ""
	case "input type":
		return val, val == "checkbox"
	case "input checked", "input disabled":
		return "", true
	}
	return "", false
}

// safeURL returns a link's or image's URL as it is to be written, and
// whether it may be: it must parse, and be http, https or mailto, or
// relative to the page (a path, query or fragment, not another host). val
// comes from the tokenizer with its character references decoded, so
// "jav&#x61;script:" is checked as the browser reads it; whitespace or
// control characters anywhere (which browsers strip out of schemes) reject
// it.
func safeURL(val string) (string, bool) {
	val = strings.TrimSpace(val)
	if val == "" || strings.ContainsFunc(val, func(r rune) bool { return r < 0x20 || r == ' ' || r == 0x7f }) {
		return "", false
	}
	u, err := url.Parse(val)
	if err != nil {
		return "", false
	}
	switch u.Scheme {
	case "http", "https", "mailto":
		return u.String(), true
	case "":
		s := u.String()
		if u.Host != "" || u.User != nil || s == "" || hostRelative(val) || hostRelative(s) {
			return "", false
		}
		return s, true
	}
	return "", false
}

// hostRelative reports whether a URL without a scheme starts like one
// naming a host ("//host", and "/\host" and "\\host" which browsers read
// the same way).
func hostRelative(s string) bool {
	return len(s) >= 2 && (s[0] == '/' || s[0] == '\\') && (s[1] == '/' || s[1] == '\\')
}

// isPlainText reports whether a title or alt text holds only letters,
// digits, spaces and a little punctuation: bluemonday's "paragraph" rule.
func isPlainText(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !strings.ContainsRune("\t\n\f\r -_',[]!./\\()", r) {
			return false
		}
	}
	return true
}

// pageIDs are the ids of the page a SIP body is shown on (layout.html and
// evaluation.html): a heading of the body, coming first in the document,
// would take the page's fragment links and its sections' names
// (aria-labelledby), so it loses its id instead.
var pageIDs = map[string]bool{"main": true, "nav-q": true, "facts": true, "prereqs": true, "versions": true, "results": true}

// isHeadingID reports whether s is an id goldmark could have made for a
// heading: lower-case ASCII letters, digits, '-' and '_'. (A heading that
// starts with an emoji gets an id starting with '-'.)
func isHeadingID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}
