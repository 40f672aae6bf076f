package registry

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
)

// fullMarkdown is goldmark as GitHub renders SIP bodies, every paragraph
// inline parsed: what the outline must equal.
var fullMarkdown = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough))

// proseCases are bodies where sparing paragraphs could go wrong: setext
// headings in containers, tables after prose, link reference
// definitions, lazy continuation lines.
var proseCases = []string{
	"# T\n\nplain prose\nmore\n",
	"Title\n=====\n\nplain\n---\n",
	"> quoted\n> ---\n\n> a\nlazy\n===\n",
	"- item\n  ---\n- item two\n\n  text\n  ===\n",
	"1. one\n   two\n   ---\n2) x\n   ==\n",
	"> - a\n>   b\n>   ---\n",
	"plain\n- not a bar\n\nplain\n* * *\n\nplain\n***\n",
	"prose\n| a | b |\n|---|---|\n| `x` | y |\n\nmore prose\n",
	"prose before\n| h |\n| - |\n| c |\n---\n",
	"[ref]: /target\n\nplain\n\n[ref]\n",
	"[ref]: /target\nplain after a definition\n===\n",
	"a paragraph\n    indented continuation\n\n\tcode\n",
	"text *emph* ~~strike~~ & entity &amp; \\\\ escape\n\n## Heading *with* emphasis\n\nsee [x](#heading-with-emphasis)\n",
	"<div id=\"x\">\nblock\n</div>\n\ninline <a name=\"y\"></a> html\n",
	"0\n-:\n-\n",
	"plain\r\n---\r\n\r\nplain\r\n\r\n",
	"  plain with spaces  \n  \n",
	"- a\n- b\n\n      code\n",
	"plain\n\n- - -\n\nplain\n=\n",
	"Setext *two*\n--\n\n[a](#setext-two)\n",
	"```\nfence\n```\nprose\n~~~\nfence\n~~~\n",
	"para one\na | b\n--|--\n`x` | y\n",
	"para one\na | b\n   --|--\n`x` | y\n",
	"para\n\ta | b\n\t-|-\n\t`c` | d\n",
	"> quote\n> a | b\n> -|-\n> `c` | d\n",
	"- item\n  a | b\n  -|-\n  `c` | d\n",
	"text\n[ref]: /url\n\n[ref]\n",
	"- item\n\n  [ref]: /x 'title'\n\n  see [ref]\n",
	"plain text\n  ---\n",
	"plain\n    ---\n",
	"a\n:-:|:-\n`x`|y\n",
	"plain &lt;b&gt; and &#91;x](y)\n",
	"plain \\[x](y)\n",
	"text <span id=\"y\"></span>\n",
	"1. a\n2. b\n   c | d\n   - | -\n   e | `f`\n",
}

func outlinesAgree(t *testing.T, name string, body []byte) {
	t.Helper()
	got := outlineOfBody(body, 3, outlineParser)
	want := outlineOfBody(body, 3, fullMarkdown.Parser())
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: outline\n got %+v\nwant %+v", name, got, want)
	}
}

func TestOutlineSparingProseIsExact(t *testing.T) {
	t.Parallel()
	for i, body := range proseCases {
		t.Run(strings.ReplaceAll(strings.Fields(body)[0], "/", "_"), func(t *testing.T) {
			outlinesAgree(t, "case "+itoa(i), []byte(body))
		})
	}
	// Every Markdown file of the repository, SIPs or not, and SafeMolt's
	// corpus (in registry/testdata).
	n := 0
	err := filepath.WalkDir("..", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == ".git" || e.Name() == "node_modules" || e.Name() == ".cache") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		outlinesAgree(t, path, b)
		if _, body, ok := strings.Cut(string(b), "\n---\n"); ok {
			outlinesAgree(t, path+" (body)", []byte(body))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Errorf("compared %d Markdown files, want the repository's (at least 50)", n)
	}
}

func FuzzOutline(f *testing.F) {
	for _, s := range proseCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		outlinesAgree(t, "fuzzed", []byte(body))
	})
}

var _ parser.ParagraphTransformer = outlineParagraphs{}
