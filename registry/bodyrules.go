package registry

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// bodyProblems checks a SIP's Markdown body: one title heading that
// matches its name (body-title), the sections its type needs
// (body-sections), relative links and anchors that resolve (body-links),
// and cited prompt or question ids that exist (body-refs). A body that
// CheckBody finds too costly to parse is not parsed: it gets one
// problem, body-too-complex, and none of the other body rules. anchorsOf
// gives the anchors of the repository's other SIP files, for links to
// them; when it is nil the links are left out (checkLinks runs them).
func bodyProblems(d *Document, anchorsOf anchorLookup, opts BodyOptions) []Problem {
	if !hasBody(d) {
		return nil
	}
	o := d.outline()
	if e := d.tooComplex; e != nil {
		at := Span{Line: bodyLine(d) - 1 + e.Line, Column: e.Column}
		return []Problem{problemAt(d, at, SeverityError, "body-too-complex", e.Help,
			"the body is not checked further: %s (%s %d, at most %d)", e.Detail, e.Limit, e.Got, e.Max)}
	}
	var out []Problem
	out = append(out, titleProblems(d, o)...)
	out = append(out, sectionProblems(d, o, opts)...)
	if anchorsOf != nil {
		out = append(out, checkLinks(d, o, anchorsOf, opts)...)
	}
	out = append(out, capped(refProblems(d, o), "body-refs", "references to ids that do not exist")...)
	return out
}

// hasBody reports whether the body rules apply to d: a SIP with a body.
func hasBody(d *Document) bool {
	return d.SIP != nil && d.content != nil && len(bytes.TrimSpace(d.content[d.bodyStart:])) > 0
}

// anchorLookup gives the anchors of the SIP file at a path, and whether
// there is one.
type anchorLookup func(path string) (map[string]bool, bool)

// checkLinks is the body-links rule of one file.
func checkLinks(d *Document, o *outline, anchorsOf anchorLookup, opts BodyOptions) []Problem {
	return capped(linkProblems(d, o, anchorsOf, opts), "body-links", "broken links")
}

// linksElsewhere reports whether a link of o goes to an anchor in another
// SIP file (one of paths), which only the repository-wide pass can check.
func linksElsewhere(d *Document, o *outline, paths map[string]int, opts BodyOptions) bool {
	for _, l := range o.links {
		if l.dest == "" || isExternal(l.dest) {
			continue
		}
		target, frag := resolve(d.Path, l.dest, opts.Root)
		if _, isSIP := paths[target]; isSIP && target != "" && frag != "" {
			return true
		}
	}
	return false
}

// outline parses the body once per document; a body over one of
// CheckBody's limits is not parsed, and has an empty outline.
func (d *Document) outline() *outline {
	if d.body == nil {
		if d.tooComplex = CheckBody(d.content[d.bodyStart:]); d.tooComplex != nil {
			d.body = &outline{anchors: map[string]bool{}}
		} else {
			d.body = outlineOf(d)
		}
	}
	return d.body
}

func titleProblems(d *Document, o *outline) []Problem {
	var h1 []heading
	for _, h := range o.headings {
		if h.level == 1 {
			h1 = append(h1, h)
		}
	}
	name := d.SIP.Name
	want := func() string { return fmt.Sprintf("# SIP-%d: %s", d.SIP.Number, name) }
	switch {
	case len(h1) == 0:
		at := Span{Line: bodyLine(d), Column: 1}
		if len(o.headings) > 0 {
			at = o.headings[0].at
		}
		return []Problem{problemAt(d, at, SeverityWarning, "body-title", "Start the body with `"+want()+"`.",
			"the body has no title heading (a level-1 heading with the SIP's name)")}
	case len(h1) > 1:
		var out []Problem
		for _, h := range h1[1:] {
			out = append(out, problemAt(d, h.at, SeverityWarning, "body-title", "Make it a level-2 heading (`## …`): a SIP has one title.",
				"a second level-1 heading %q; the title is at line %d", h.text, h1[0].at.Line))
		}
		return out
	case name != "" && !strings.Contains(headingKey(h1[0].text), headingKey(name)):
		return []Problem{problemAt(d, h1[0].at, SeverityWarning, "body-title", "Write the SIP's name in its title: `"+want()+"`.",
			"the title %q does not name the SIP (%q)", h1[0].text, name)}
	}
	return nil
}

// headingKey is a heading as a reader compares it: case, punctuation, a
// leading section number and trailing parentheticals do not matter, so
// "## 3. Procedure (Proctor Script)" reads as "procedure".
func headingKey(s string) string {
	s = strings.TrimSpace(s)
	for strings.HasSuffix(s, ")") {
		i := strings.LastIndexByte(s, '(')
		if i < 0 {
			break
		}
		s = strings.TrimSpace(s[:i])
	}
	if key, ok := headingKeyASCII(s); ok {
		return key
	}
	return headingKeyUnicode(s)
}

// headingKeyUnicode is the rest of headingKey for any text.
func headingKeyUnicode(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte(' ')
		}
	}
	words := strings.Fields(b.String())
	for len(words) > 0 && strings.Trim(words[0], "0123456789") == "" {
		words = words[1:] // a section number: 3. or 2.1
	}
	return strings.Join(words, " ")
}

// headingKeyASCII is the rest of headingKey for ASCII text, in one pass:
// its words of letters and digits in lower case, without the leading
// ones that are all digits, joined by single spaces; ok is false when s
// is not all ASCII.
func headingKeyASCII(s string) (key string, ok bool) {
	b := make([]byte, 0, len(s))
	number := true // still in the leading words that are all digits
	wordStart := -1
	for i := 0; i <= len(s); i++ {
		c := byte(' ')
		if i < len(s) {
			c = s[i]
		}
		switch {
		case c >= 0x80:
			return "", false
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z':
			if wordStart < 0 {
				wordStart = len(b)
				if len(b) > 0 {
					b = append(b, ' ')
					wordStart++
				}
			}
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			if c > '9' {
				number = false
			}
		case wordStart >= 0:
			if number {
				b = b[:0] // a section number: 3. or 2.1
			}
			wordStart = -1
		}
	}
	return string(b), true
}

// hasSection reports whether a heading (as headingKey reads it) is the
// section want: it is, or starts with, want's words.
func hasSection(heading, want string) bool {
	return want != "" && (heading == want || strings.HasPrefix(heading, want+" "))
}

func bodyLine(d *Document) int {
	return bytes.Count(d.content[:d.bodyStart], []byte("\n")) + 1
}

// sectionKeys are a required section's alternatives as written and as
// headingKey reads them, worked out once per distinct requirement.
type sectionKeys struct{ alts, keys []string }

var sectionKeyCache sync.Map // string -> sectionKeys

func sectionKeysOf(want string) sectionKeys {
	if k, ok := sectionKeyCache.Load(want); ok {
		return k.(sectionKeys)
	}
	var k sectionKeys
	for _, a := range strings.Split(want, "|") {
		a = strings.TrimSpace(a)
		k.alts = append(k.alts, a)
		k.keys = append(k.keys, headingKey(a))
	}
	sectionKeyCache.Store(want, k)
	return k
}

func sectionProblems(d *Document, o *outline, opts BodyOptions) []Problem {
	var have []string
	for _, h := range o.headings {
		if h.level == 2 {
			have = append(have, headingKey(h.text))
		}
	}
	var out []Problem
	for _, want := range opts.sectionsFor(d.SIP.Type) {
		k := sectionKeysOf(want)
		alts := k.alts
		found := false
		for _, key := range k.keys {
			found = found || slices.ContainsFunc(have, func(h string) bool { return hasSection(h, key) })
		}
		if !found {
			at := Span{Line: bodyLine(d), Column: 1}
			for _, h := range o.headings {
				if h.level == 1 {
					at = h.at
					break
				}
			}
			out = append(out, problemAt(d, at, SeverityWarning, "body-sections",
				fmt.Sprintf("Add a section `## %s` (%s SIP has %s).", alts[0], withArticle(string(d.SIP.Type)), quoteList(opts.sectionsFor(d.SIP.Type))),
				"the body has no section %s", strings.Join(quoteEach(alts), " or ")))
		}
	}
	return out
}

func quoteEach(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = "“" + x + "”"
	}
	return out
}

func quoteList(s []string) string {
	var out []string
	for _, x := range s {
		out = append(out, "## "+strings.TrimSpace(strings.Split(x, "|")[0]))
	}
	return strings.Join(out, ", ")
}

func linkProblems(d *Document, o *outline, anchorsOf anchorLookup, opts BodyOptions) []Problem {
	var out []Problem
	for _, l := range o.links {
		if l.dest == "" || isExternal(l.dest) {
			continue
		}
		target, frag := resolve(d.Path, l.dest, opts.Root)
		anchors := o.anchors
		switch other, isSIP := anchorsOf(target); {
		case target == "":
		case isSIP:
			anchors = other
		case opts.Exists != nil:
			exists, known := opts.Exists(target)
			if known && !exists {
				out = append(out, problemAt(d, l.at, SeverityError, "body-links", linkHint(d.Path, l.dest),
					"link to %s: no such file in the repository", l.dest))
			}
			continue
		default:
			continue
		}
		if frag != "" && !anchors[frag] && !anchors[strings.ToLower(frag)] {
			hint := "Link to a heading's anchor: its text in lower case, spaces as hyphens, punctuation dropped."
			if s := suggest(frag, keysOf(anchors)); s != "" {
				hint = "Did you mean #" + s + "?"
			}
			out = append(out, problemAt(d, l.at, SeverityError, "body-links", hint,
				"link to %s: no heading has the anchor #%s", l.dest, frag))
		}
	}
	return out
}

// linkHint says what a missing link's path is relative to: the
// repository's root for a link starting with /, else the file's folder.
func linkHint(from, dest string) string {
	if strings.HasPrefix(dest, "/") {
		return "Correct the path: a link starting with / is relative to the repository's root."
	}
	return "Correct the path: it is relative to " + pathDir(from) + "."
}

func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i+1]
	}
	return "the file's folder"
}

func keysOf(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// refProblems finds code spans that cite a prompt or question id the
// config does not define. A span cites an id when it sits in a table
// column whose header names ids ("Probe IDs", "Prompt id"), or when it
// has an id's shape and starts with the first word of one of the SIP's
// own ids; anything else in backticks is left alone.
func refProblems(d *Document, o *outline) []Problem {
	ids := configIDs(d.SIP)
	if len(ids) == 0 {
		return nil
	}
	firstWord := map[string]bool{}
	for _, id := range ids {
		firstWord[strings.FieldsFunc(id, isSep)[0]] = true
	}
	var out []Problem
	for _, c := range o.codes {
		if !idShape.MatchString(c.text) || slices.Contains(ids, c.text) {
			continue
		}
		if !namesIDs(c.column) && !firstWord[strings.FieldsFunc(c.text, isSep)[0]] {
			continue
		}
		hint := "Cite an id defined under config (" + strings.Join(ids[:min(len(ids), 5)], ", ") + ")."
		if full := extended(c.text, ids); full != "" {
			hint = "Did you mean `" + full + "`?"
		} else if s := suggest(c.text, ids); s != "" {
			hint = "Did you mean `" + s + "`?"
		}
		out = append(out, problemAt(d, c.at, SeverityError, "body-refs", hint,
			"`%s` is cited as a prompt or question id, but the config defines no such id", c.text))
	}
	return out
}

func isSep(r rune) bool { return r == '-' || r == '_' }

// namesIDs reports whether a table column header is about ids.
func namesIDs(header string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(header), func(r rune) bool { return r == ' ' || r == '/' || r == '(' || r == ')' }) {
		if w == "id" || w == "ids" {
			return true
		}
	}
	return false
}

// extended is the one id that begins with the cited text, if exactly one
// does (a citation that was shortened).
func extended(cited string, ids []string) string {
	var found string
	for _, id := range ids {
		if strings.HasPrefix(id, cited) {
			if found != "" {
				return ""
			}
			found = id
		}
	}
	return found
}

// capped keeps the first maxPerRule problems of a rule and counts the
// rest in one more.
func capped(ps []Problem, rule, what string) []Problem {
	if len(ps) <= maxPerRule {
		return ps
	}
	more := ps[maxPerRule]
	more.Message = fmt.Sprintf("and %s more %s in this file", groupDigits(len(ps)-maxPerRule), what)
	more.Hint = "Fix the ones above, then run the check again."
	return append(ps[:maxPerRule:maxPerRule], more)
}
