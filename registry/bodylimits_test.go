package registry

import (
	"runtime"
	"strings"
	"testing"

	"github.com/yuin/goldmark/text"
)

const mib = 1 << 20

// fill repeats s to n bytes.
func fill(s string, n int) string { return strings.Repeat(s, n/len(s)+1)[:n] }

// wideTable is a table whose header has cols columns, over one-cell rows
// up to n bytes.
func wideTable(cols, n int) string {
	var b strings.Builder
	b.WriteString(strings.Repeat("|a", cols) + "|\n" + strings.Repeat("|-", cols) + "|\n")
	for b.Len() < n-2 {
		b.WriteString("a\n")
	}
	return b.String()
}

// table is a table of cols columns and rows rows.
func table(cols, rows int) string {
	return strings.Repeat("|a", cols) + "|\n" + strings.Repeat("|-", cols) + "|\n" + strings.Repeat("a\n", rows)
}

// nestedLists is lists nested by indentation, depth levels deep, again
// and again up to n bytes.
func nestedLists(depth, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i = (i + 1) % depth {
		b.WriteString(strings.Repeat("  ", i) + "* a\n")
	}
	return b.String()
}

// bodyAttacks are the inputs that made goldmark take seconds or
// gigabytes, at 1 MiB, with the limit each exceeds and where.
var bodyAttacks = []struct {
	name, src, limit string
	line             int
}{
	{"a header of 1,024 columns over one-cell rows", wideTable(1024, 53_000), "table cells", 1},
	{"a table of 100 columns in a 1 MiB body", "# T\n\ntext\n\n" + wideTable(100, mib), "table cells", 5},
	{"unclosed link destinations", fill("[a](", mib), "inline markup", 1},
	{"unclosed link destinations, one a line", fill("[a](\n", mib), "inline markup", 1},
	{"unclosed link destinations with <", fill("[a](<b", mib), "inline markup", 1},
	{"nested brackets", strings.Repeat("[", mib/2) + "a" + strings.Repeat("]", mib/2), "inline markup", 1},
	{"mismatched emphasis", fill("*a_ ", mib), "inline markup", 1},
	{"emphasis closers in threes", "a**b" + fill("c* ", mib), "inline markup", 1},
	{"link openers", fill("[a", mib), "inline markup", 1},
	{"link reference definitions", fill("[a]: u\n", mib/2) + "\n" + fill("[a] ", mib/2), "inline markup", 1},
	{"backtick runs", fill("e`e``e```e````", mib), "inline markup", 1},
	{"raw HTML openers", fill("<a ", mib), "inline markup", 1},
	{"block quotes on one line", fill(">", 64<<10), "nesting", 1},
	{"block quotes on every line", fill(strings.Repeat(">", 100)+"\n", mib), "nesting", 1},
	{"ordered lists on one line", fill("1. ", mib), "nesting", 1},
	{"quotes and lists", fill("> - ", mib), "nesting", 1},
	{"lists nested by indentation", nestedLists(1000, mib), "nesting", MaxBodyNesting + 1},
}

func TestCheckBodyRefusesAttacks(t *testing.T) {
	for _, tc := range bodyAttacks {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckBody([]byte(tc.src))
			if err == nil {
				t.Fatalf("CheckBody accepted %d bytes", len(tc.src))
			}
			if err.Limit != tc.limit || err.Line != tc.line {
				t.Errorf("got %s at line %d (%v), want %s at line %d", err.Limit, err.Line, err, tc.limit, tc.line)
			}
			if err.Got <= err.Max || err.Help == "" {
				t.Errorf("got %d of at most %d, help %q", err.Got, err.Max, err.Help)
			}
		})
	}
}

// underLimits are the costliest bodies of 1 MiB found that CheckBody
// lets through (each parses in well under a second).
func underLimits() map[string]string {
	return map[string]string{
		"tables to the cell limit":     strings.Repeat(table(100, 15)+"\n", 57) + fill("a\n", mib-57*(len(table(100, 15))+1)),
		"quotes to the nesting limit":  fill(strings.Repeat(">", MaxBodyNesting)+"a\n", mib),
		"lists to the nesting limit":   nestedLists(MaxBodyNesting/2, mib),
		"ordered lists to the limit":   fill(strings.Repeat("1. ", MaxBodyNesting)+"a\n", mib),
		"unclosed links to the limit":  fill("[a](", 16<<10) + "\n\n" + fill("a", mib-(16<<10)-2),
		"one long paragraph of links":  fill("[a](", 340) + fill("a", mib-340),
		"mismatched emphasis to limit": fill("*a_ ", 16<<10) + "\n\n" + fill("a\n\n", mib-(16<<10)-2),
		"short paragraphs of brackets": fill("[a](\n\n", mib),
		"headings":                     fill("# a\n", mib),
	}
}

func TestCheckBodyLetsWorstBodiesThrough(t *testing.T) {
	for name, src := range underLimits() {
		t.Run(name, func(t *testing.T) {
			if err := CheckBody([]byte(src)); err != nil {
				t.Fatalf("CheckBody refused it: %v", err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			outlineParser.Parse(text.NewReader([]byte(src)))
			runtime.ReadMemStats(&after)
			// goldmark allocates a few hundred bytes per byte of
			// Markdown; the attacks took gigabytes.
			if n, limit := after.TotalAlloc-before.TotalAlloc, uint64(512<<20); n > limit {
				t.Errorf("parsing %d bytes allocated %d bytes, want at most %d", len(src), n, limit)
			}
		})
	}
}

// FuzzCountMarkers: the vectorised count of a line's inline markers
// equals a count byte by byte that skips what a backslash escapes.
func FuzzCountMarkers(f *testing.F) {
	for _, s := range []string{"", "plain prose", "[a](b) *em* _u_ ~s~ `c` <x>", `\[not\] \\[yes]`, `\`, "a\\", "***___[[[((("} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, seg []byte) {
		want := 0
		for i := 0; i < len(seg); i++ {
			switch seg[i] {
			case '\\':
				i++
			case '[', ']', '(', '*', '_', '~', '`', '<':
				want++
			}
		}
		if got := countMarkers(seg); got != want {
			t.Errorf("countMarkers(%q) = %d, want %d", seg, got, want)
		}
	})
}
