package registry

import (
	"bytes"
	"errors"
	"testing"

	"github.com/adrg/frontmatter"
)

// adrgFormat hands back the raw frontmatter bytes: adrg/frontmatter is
// the reference splitFrontmatter must agree with.
var adrgFormat = frontmatter.NewFormat("---", "---", func(data []byte, v any) error {
	*(v.(*[]byte)) = data
	return nil
})

func FuzzSplitFrontmatter(f *testing.F) {
	for _, s := range []string{
		"---\na: 1\n---\nbody\n", "\n\n---\na: 1\n---", "---\na: 1\n", "x\n---\na: 1\n---\n",
		"  ---  \na: 1\n ---\t\nbody", "---\r\na: 1\r\n---\r\nbody", "---\n---\n", "", "---",
		"---\na: |\n  ---x\n---\n# T\n", "\t\n---\n---\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		var want []byte
		body, err := frontmatter.MustParse(bytes.NewReader(content), &want, adrgFormat)
		fm, start, ok := splitFrontmatter(content)
		if ok != (err == nil) {
			if err != nil && !errors.Is(err, frontmatter.ErrNotFound) {
				t.Skip("reader error")
			}
			t.Fatalf("%q: ok %v, adrg error %v", content, ok, err)
		}
		if ok && (!bytes.Equal(fm, want) || start != len(content)-len(body)) {
			t.Fatalf("%q: got %q at %d, adrg %q at %d", content, fm, start, want, len(content)-len(body))
		}
	})
}
