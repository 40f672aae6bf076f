package api

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func repeatTo(s string, n int) string { return strings.Repeat(s, n/len(s)+1)[:n] }

// TestMarkdownCostlyBodiesArePreformatted: the bodies that made goldmark
// take seconds and gigabytes are shown as escaped text, in memory a
// small multiple of their size (the table alone had taken 4.7 GB).
func TestMarkdownCostlyBodiesArePreformatted(t *testing.T) {
	wide := strings.Repeat("|a", 1024) + "|\n" + strings.Repeat("|-", 1024) + "|\n" + strings.Repeat("a\n", 16_000)
	for _, tc := range []struct{ name, src string }{
		{"a table padded to 16 million cells", wide},
		{"unclosed links", repeatTo("[a](", 1<<20)},
		{"block quotes 64 KiB deep", repeatTo(">", 64<<10) + "<script>"},
		{"mismatched emphasis", repeatTo("*a_ ", 1<<20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMarkdown()
			var got string
			n := allocated(func() { got = string(m.render("", tc.src)) })
			if !strings.HasPrefix(got, "<pre>") || !strings.HasSuffix(got, "</pre>") || strings.Contains(got, "<script>") {
				t.Errorf("got %.200q…, want the body escaped in a pre element", got)
			}
			if limit := uint64(16*len(tc.src) + 32<<20); n > limit { // with room for what other goroutines allocate meanwhile
				t.Errorf("allocated %d bytes for %d bytes of Markdown, want at most %d", n, len(tc.src), limit)
			}
		})
	}
}

// TestMarkdownWorstBodiesUnderTheLimits: the costliest 1 MiB bodies the
// limits let through are rendered in bounded memory (goldmark and the
// sanitiser allocate a few hundred bytes per byte of Markdown).
func TestMarkdownWorstBodiesUnderTheLimits(t *testing.T) {
	table := strings.Repeat("|a", 100) + "|\n" + strings.Repeat("|-", 100) + "|\n" + strings.Repeat("a\n", 15) + "\n"
	for _, tc := range []struct{ name, src string }{
		{"tables to the cell limit", strings.Repeat(table, 57) + repeatTo("a\n", 1<<20-57*len(table))},
		{"quotes to the nesting limit", repeatTo(strings.Repeat(">", 32)+"a\n", 1<<20)},
		{"ordered lists to the nesting limit", repeatTo(strings.Repeat("1. ", 32)+"a\n", 1<<20)},
		{"unclosed links to the inline limit", repeatTo("[a](", 16<<10) + "\n\n" + repeatTo("a ", 1<<20-16<<10-2)},
		{"mismatched emphasis to the inline limit", repeatTo("*a_ ", 16<<10) + "\n\n" + repeatTo("a\n\n", 1<<20-16<<10-2)},
		{"short paragraphs of links", repeatTo("[a](\n\n", 1<<20)},
		{"headings", repeatTo("# a\n", 1<<20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMarkdown()
			var got string
			n := allocated(func() { got = string(m.render("", tc.src)) })
			if strings.HasPrefix(got, "<pre>") {
				t.Fatalf("rendered as text: %.200q…", got)
			}
			if limit := uint64(1 << 30); n > limit {
				t.Errorf("allocated %d bytes, want at most %d", n, limit)
			}
			t.Logf("%d bytes of Markdown: %d bytes allocated, %d of HTML", len(tc.src), n, len(got))
		})
	}
}

// TestMarkdownCacheIsBounded: the cache holds at most its limit of
// HTML, and renderings without a key (drafts' previews) never enter it.
func TestMarkdownCacheIsBounded(t *testing.T) {
	m := newMarkdown()
	if m.limit != maxRenderCacheBytes {
		t.Fatalf("limit %d, want %d", m.limit, maxRenderCacheBytes)
	}
	m.limit = 1 << 20
	body := repeatTo("word ", 32<<10)
	for i := range 100 {
		m.render("", fmt.Sprintf("%s %d", body, i))
	}
	if len(m.cache) != 0 || m.size != 0 {
		t.Fatalf("previews cached: %d entries, %d bytes", len(m.cache), m.size)
	}
	for i := range 100 {
		m.render(fmt.Sprintf("key-%d", i), fmt.Sprintf("%s %d", body, i))
		if m.size > m.limit {
			t.Fatalf("after %d renderings the cache holds %d bytes, want at most %d", i+1, m.size, m.limit)
		}
	}
	total := 0
	for _, h := range m.cache {
		total += len(h)
	}
	if total != m.size || len(m.cache) == 0 {
		t.Errorf("cache of %d entries holds %d bytes, counted %d", len(m.cache), total, m.size)
	}
}
