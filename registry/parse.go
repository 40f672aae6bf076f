package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sipregistry/sip/registry/internal/yaml"
)

// Document is one parsed SIP file: the definition it declares (nil when
// the frontmatter could not be read at all), its Markdown body, and the
// problems found in the file on its own.
type Document struct {
	Path     string
	SIP      *SIP
	Problems []Problem

	raw        []byte                 // the file's bytes as stored
	sha256     atomic.Pointer[string] // hex digest of raw, once computed
	content    []byte                 // the file with line endings normalised
	bodyStart  int                    // offset of the Markdown body in content
	tooComplex *BodyLimitError        // why the body is not parsed (body-too-complex), once outline has run
	unchanged  bool                   // stands in for a file the registry already holds
	spans      map[string]Span        // where each field's value is, by field path
	fmLine     int                    // line of the opening ---
	prereqAt   []Span                 // where each prerequisites item is
	credAt     []Span                 // where each credential prerequisite is
	body       *outline               // the body's headings, links and code, once read
}

// SHA256 returns the hex digest of the file's bytes as stored. It is
// computed when first asked for: validating files on their own never
// needs it, syncs and the edit rules do.
func (d *Document) SHA256() string {
	if s := d.sha256.Load(); s != nil {
		return *s
	}
	sum := sha256.Sum256(d.raw)
	s := hex.EncodeToString(sum[:])
	d.sha256.Store(&s)
	return s
}

// Span returns where the value of a top-level field is, or the opening
// line of the frontmatter when the field is absent.
func (d *Document) Span(field string) Span {
	if s, ok := d.spans[field]; ok {
		return s
	}
	return Span{Line: max(d.fmLine, 1), Column: 1, EndLine: max(d.fmLine, 1)}
}

// Body returns the Markdown after the frontmatter (the whole file when it
// has no frontmatter), with line endings normalised to LF.
func (d *Document) Body() string {
	if d.content == nil {
		return ""
	}
	return string(d.content[d.bodyStart:])
}

// RawConfig returns the document's `config` map as JSON-compatible values
// (nil when there is none), for storing exactly what was written. Aliases
// are expanded within the same node budget as parsing.
func (d *Document) RawConfig() map[string]any {
	if d.SIP == nil || d.content == nil {
		return nil
	}
	fm, _, ok := splitFrontmatter(d.content)
	if !ok {
		return nil
	}
	var root yaml.Node
	if yaml.Unmarshal(fm, &root) != nil || len(root.Content) == 0 {
		return nil
	}
	dec := newDecoder(&problems{path: d.Path}, 1)
	o, ok := dec.object(root.Content[0], name{index: -1}, 0)
	if !ok || o.get("config") == nil {
		return nil
	}
	m, _ := dec.toAny(o.get("config"), 1).(map[string]any)
	return m
}

// AnswerSpan is where question id's answer (plain or sealed) is.
func (d *Document) AnswerSpan(question string) Span { return d.Span(answerField(question)) }

func answerField(question string) string { return "config.questions." + question + ".answer" }

// fileSpan is used for problems about the whole file.
var fileSpan = Span{Line: 1, Column: 1, EndLine: 1}

// splitFrontmatter cuts content into its YAML frontmatter and the offset
// of the body: the first line that is not blank is `---`, and the
// frontmatter runs to the next line that is `---` (lines compared with
// surrounding white space trimmed, as adrg/frontmatter, which this
// replaces on the hot path, compares them). ok is false when either line
// is missing.
func splitFrontmatter(content []byte) (fm []byte, bodyStart int, ok bool) {
	start, opened := -1, false
	for off := 0; off < len(content); {
		end := bytes.IndexByte(content[off:], '\n')
		next := len(content)
		if end >= 0 {
			next = off + end + 1
		}
		line := bytes.TrimSpace(content[off:next])
		switch {
		case !opened && len(line) == 0:
		case !opened && string(line) == "---":
			opened, start = true, next
		case !opened:
			return nil, 0, false
		case string(line) == "---":
			return content[start:off], next, true
		}
		off = next
	}
	return nil, 0, false
}

var bom = []byte("\xef\xbb\xbf")

// Parse reads one SIP file. It never fails: whatever is wrong with the file
// is in the returned document's Problems.
func Parse(path string, content []byte) *Document {
	return parse(path, content, true)
}

// parse reads one SIP file, and its body's outline when eager (otherwise
// the outline is read when first asked for: a file read only for what the
// rules across files need may never be asked).
func parse(path string, content []byte, eager bool) *Document {
	doc := &Document{Path: path, spans: make(map[string]Span, 16), raw: content} // the top-level fields, about 16
	ps := &problems{path: path}
	defer func() { doc.Problems = ps.list }()

	if len(content) > MaxFileSize {
		ps.errorf("file-too-large", fileSpan, "Keep SIP files under 1 MiB.",
			"file is %d bytes; the limit is %d", len(content), MaxFileSize)
		return doc
	}
	content = bytes.TrimPrefix(content, bom)
	if line, ok := checkText(content); !ok {
		ps.errorf("file-encoding", Span{Line: line, Column: 1}, "Save the file as UTF-8 text.",
			"file is not UTF-8 text (invalid byte or NUL at line %d)", line)
		return doc
	}
	if bytes.IndexByte(content, '\r') >= 0 {
		content = bytes.ReplaceAll(content, []byte("\r\n"), []byte("\n"))
		content = bytes.ReplaceAll(content, []byte("\r"), []byte("\n"))
	}

	open := openingLine(content)
	if open == 0 {
		ps.errorf("frontmatter-missing", fileSpan, "Start the file with a line `---`, the fields, and a closing `---`.",
			"file does not start with YAML frontmatter (a first line `---`)")
		doc.content = content
		return doc
	}
	doc.fmLine = open
	doc.content = content
	fm, bodyStart, ok := splitFrontmatter(content)
	if !ok {
		ps.errorf("frontmatter-missing", Span{Line: open, Column: 1}, "Add a closing line `---` after the last field.",
			"frontmatter opened at line %d is never closed", open)
		return doc
	}
	doc.bodyStart = bodyStart

	var root yaml.Node
	if err := yaml.Unmarshal(fm, &root); err != nil {
		e := locateYAMLError(fm, err)
		ps.errorf("yaml-syntax", Span{Line: open + e.line, Column: e.column}, "Fix the YAML; quote strings that contain `: ` or `#`, and indent with spaces, not tabs.", "%s", e.message)
		return doc
	}
	if root.Kind == 0 || len(root.Content) == 0 || isNull(root.Content[0]) {
		ps.errorf("frontmatter-missing", Span{Line: open, Column: 1}, "Write the SIP's fields between the two `---` lines.",
			"frontmatter is empty")
		return doc
	}
	dec := newDecoder(ps, open+1)
	dec.spans = doc.spans
	doc.SIP = dec.decodeSIP(root.Content[0], doc)
	if doc.SIP != nil {
		body := doc.content[doc.bodyStart:]
		doc.SIP.Description = describeBody(body)
		// Read the body's outline here, where files are parsed in
		// parallel, rather than in the repository rules.
		if eager {
			doc.outline()
		}
		if len(bytes.TrimSpace(body)) == 0 {
			ps.warnf("body-empty", Span{Line: open, Column: 1}, "Describe what the evaluation tests, how, and how it is scored.",
				"the SIP has no Markdown body after its frontmatter")
		}
	}
	return doc
}

// checkText reports whether content is UTF-8 without NUL bytes, and if not
// the line of the first offending byte.
func checkText(content []byte) (int, bool) {
	bad := bytes.IndexByte(content, 0)
	if utf8.Valid(content) && bad < 0 {
		return 0, true
	}
	for i := 0; i < len(content); {
		r, n := utf8.DecodeRune(content[i:])
		if (r == utf8.RuneError && n == 1) || r == 0 {
			bad = i
			break
		}
		i += n
	}
	return bytes.Count(content[:max(bad, 0)], []byte("\n")) + 1, false
}

// openingLine returns the line number of the frontmatter's opening `---`
// (blank lines may come first, as adrg/frontmatter allows), or 0.
func openingLine(content []byte) int {
	for line := 1; len(content) > 0; line++ {
		var l []byte
		l, content, _ = bytes.Cut(content, []byte("\n"))
		switch strings.TrimSpace(string(l)) {
		case "":
			continue
		case "---":
			return line
		default:
			return 0
		}
	}
	return 0
}

// describeBody returns the first paragraph of a Markdown body, as one line,
// for listings.
func describeBody(body []byte) string {
	var para [][]byte
	inFence := false
	for l := range bytes.Lines(body) {
		t := bytes.TrimSpace(l)
		if bytes.HasPrefix(t, []byte("```")) || bytes.HasPrefix(t, []byte("~~~")) {
			inFence = !inFence
			continue
		}
		switch {
		case inFence:
		case len(t) == 0, t[0] == '#', t[0] == '|', bytes.HasPrefix(t, []byte("<!--")), string(t) == "---":
			if len(para) > 0 {
				return clip(string(bytes.Join(para, []byte(" "))), 300)
			}
		default:
			para = append(para, t)
		}
	}
	return clip(string(bytes.Join(para, []byte(" "))), 300)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// String summarises a document for debugging.
func (d *Document) String() string {
	if d.SIP == nil {
		return fmt.Sprintf("%s (unreadable)", d.Path)
	}
	return fmt.Sprintf("%s (SIP-%d %s)", d.Path, d.SIP.Number, d.SIP.ID)
}
