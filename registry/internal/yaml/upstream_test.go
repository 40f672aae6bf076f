package yaml_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	upstream "gopkg.in/yaml.v3"

	"github.com/sipregistry/sip/registry/internal/yaml"
)

// This package is gopkg.in/yaml.v3 v3.0.1 with faster reading of ASCII
// (the changes are marked [sip]). These tests hold it to the upstream
// decoder: the same node trees, positions, comments and errors for any
// input.

// frontmatters are the frontmatters of every SIP file in the repository
// (SafeMolt's corpus, the rule fixtures, the bundled SIPs), and the whole
// files too, so bodies exercise the error paths.
func frontmatters(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, root := range []string{"../../testdata", "../../../evaluations"} {
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".md") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, b)
			if rest, ok := bytes.CutPrefix(b, []byte("---\n")); ok {
				if end := bytes.Index(rest, []byte("\n---")); end >= 0 {
					out = append(out, rest[:end+1])
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	if len(out) < 50 {
		tb.Fatalf("found only %d SIP files", len(out))
	}
	return out
}

// tree writes a node tree with everything the registry reads of it.
func tree(b *strings.Builder, n any, depth int) {
	switch n := n.(type) {
	case *yaml.Node:
		if n == nil {
			b.WriteString("nil\n")
			return
		}
		fmt.Fprintf(b, "%*s%d %d %q %q %q @%d:%d h=%q l=%q f=%q", depth*2, "", n.Kind, n.Style, n.Tag, n.Value, n.Anchor, n.Line, n.Column, n.HeadComment, n.LineComment, n.FootComment)
		if n.Alias != nil {
			fmt.Fprintf(b, " alias@%d:%d", n.Alias.Line, n.Alias.Column)
		}
		b.WriteByte('\n')
		for _, c := range n.Content {
			tree(b, c, depth+1)
		}
	case *upstream.Node:
		if n == nil {
			b.WriteString("nil\n")
			return
		}
		fmt.Fprintf(b, "%*s%d %d %q %q %q @%d:%d h=%q l=%q f=%q", depth*2, "", n.Kind, n.Style, n.Tag, n.Value, n.Anchor, n.Line, n.Column, n.HeadComment, n.LineComment, n.FootComment)
		if n.Alias != nil {
			fmt.Fprintf(b, " alias@%d:%d", n.Alias.Line, n.Alias.Column)
		}
		b.WriteByte('\n')
		for _, c := range n.Content {
			tree(b, c, depth+1)
		}
	}
}

// both decodes in into nodes with this package and upstream, and returns
// each side's tree and error as text.
func both(in []byte) (ours, theirs string) {
	var a yaml.Node
	var b upstream.Node
	errA := yaml.Unmarshal(in, &a)
	errB := upstream.Unmarshal(in, &b)
	var sa, sb strings.Builder
	fmt.Fprintf(&sa, "err=%v\n", errA)
	fmt.Fprintf(&sb, "err=%v\n", errB)
	tree(&sa, &a, 0)
	tree(&sb, &b, 0)
	// Decoding into a map too: the typed path reads the same tokens.
	var ma, mb map[string]any
	fmt.Fprintf(&sa, "map err=%v %v\n", yaml.Unmarshal(in, &ma), ma)
	fmt.Fprintf(&sb, "map err=%v %v\n", upstream.Unmarshal(in, &mb), mb)
	return sa.String(), sb.String()
}

var seeds = []string{
	"",
	"a: b\n",
	"a: 'it''s'\nb: \"x\\ty\\u00e9\\\n  z\"\n",
	"a: &x {b: [1, 2, c: d]}\nc: *x\n<<: *x\n",
	"key: value # comment\n# head\nnext:\n  - one\n  - two: three\n",
	"a: b: c\n",
	"a: \"unterminated\n",
	"a: 'x\n---\nb: y'\n",
	"\ta: tab\n",
	"a: caf\xc3\xa9 na\xc3\xafve \xe2\x80\xa8 sep\n",
	"a: \xff\n",
	"a: \x01\n",
	"a: |\n  literal: text\n  more\nb: >-\n  folded\n  text\n",
	"{a: b, c: [d, e]: f}\n",
	"a: http://x.y/z?q=1#frag\nb: x:y\nc: [x:y, 'z']\n",
	"- [a, b]\n- {c: d}\n- ? e\n  : f\n",
	"a:    spaced    words   \nb: \"  spaced  \"\n",
}

func TestSameAsUpstream(t *testing.T) {
	t.Parallel()
	inputs := frontmatters(t)
	for _, s := range seeds {
		inputs = append(inputs, []byte(s))
	}
	for i, in := range inputs {
		ours, theirs := both(in)
		if ours != theirs {
			t.Errorf("input %d (%.60q): got\n%s\nwant (upstream)\n%s", i, in, ours, theirs)
		}
	}
}

func FuzzSameAsUpstream(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for _, in := range frontmatters(f) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 64<<10 {
			return
		}
		ours, theirs := both(in)
		if ours != theirs {
			t.Fatalf("input %q: got\n%s\nwant (upstream)\n%s", in, ours, theirs)
		}
	})
}

// BenchmarkDecode compares this package with upstream on every
// frontmatter of the repository's SIP files.
func BenchmarkDecode(b *testing.B) {
	var inputs [][]byte
	for _, in := range frontmatters(b) {
		if !bytes.HasPrefix(in, []byte("---")) {
			inputs = append(inputs, in)
		}
	}
	b.Run("sip", func(b *testing.B) {
		for b.Loop() {
			for _, in := range inputs {
				var n yaml.Node
				_ = yaml.Unmarshal(in, &n)
			}
		}
	})
	b.Run("upstream", func(b *testing.B) {
		for b.Loop() {
			for _, in := range inputs {
				var n upstream.Node
				_ = upstream.Unmarshal(in, &n)
			}
		}
	})
}
