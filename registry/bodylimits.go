package registry

import (
	"bytes"
	"fmt"
)

// Limits on what a Markdown body may ask of goldmark, which parses it
// for the body rules and renders it for the site. goldmark spends time
// or memory out of proportion to a body's size on three shapes of input;
// checkBody measures each in one pass over the bytes, before any parse,
// and a body over a limit is never given to goldmark.
const (
	// MaxBodyNesting bounds the containers (block quotes, list items)
	// one line can be inside: goldmark's block parser revisits every open
	// container on each line, so its time grows with the square of the
	// depth (64 KiB of '>' took 1.3 s). A line's depth is counted as its
	// quote and list markers plus half its indentation, which is more
	// than or equal to the depth goldmark gives it.
	MaxBodyNesting = 32
	// MaxTableCells bounds the cells of a body's tables as GFM pads them:
	// every row gets as many cells as the header has columns, so a header
	// of 1,024 columns over 16,000 one-cell rows (53 KB) made 16 million
	// cells, 168 MB of HTML and 4.7 GB of allocations.
	MaxTableCells = 100_000
	// MaxInlineWork bounds, summed over the body's paragraphs, the markers
	// that open or close inline markup ([ ] ( * _ ~ ` < not escaped by a
	// backslash) times the paragraph's length in bytes: goldmark's inline
	// parser can scan the rest of the paragraph from each marker (unclosed
	// link destinations, `[a](` repeated: 512 KB took 42 s), or the
	// markers before it (mismatched emphasis, nested brackets), so its
	// time is bounded by that product.
	MaxInlineWork = 1 << 28
)

// BodyLimitError says which limit a body exceeds, and where.
type BodyLimitError struct {
	Limit        string // "nesting", "table cells" or "inline markup"
	Line, Column int    // in the body, from 1
	Got, Max     int
	Detail       string // what was counted, at Line
	Help         string // how to bring the body under the limit
}

func (e *BodyLimitError) Error() string {
	return fmt.Sprintf("line %d: %s (%s %d, at most %d)", e.Line, e.Detail, e.Limit, e.Got, e.Max)
}

// CheckBody reports whether goldmark can parse a Markdown body in time
// and memory proportional to its size: nil, or the first limit it
// exceeds. It reads each byte a bounded number of times.
func CheckBody(src []byte) *BodyLimitError {
	var (
		cells, work int
		para        paragraphScan
	)
	line := 0
	for off := 0; off <= len(src); line++ {
		end := bytes.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		l := src[off:end]
		depth, col := nesting(l)
		if depth > MaxBodyNesting {
			return &BodyLimitError{Limit: "nesting", Line: line + 1, Column: col, Got: depth, Max: MaxBodyNesting,
				Detail: fmt.Sprintf("this line is %d block quotes, list items or indentation levels deep", depth),
				Help:   fmt.Sprintf("Nest quotes and lists at most %d deep; put deeply indented material in a fenced code block at the left margin.", MaxBodyNesting)}
		}
		if isBlank(l) {
			if e := para.end(&cells, &work); e != nil {
				return e
			}
		} else {
			para.add(line, l, col-1)
		}
		if end == len(src) {
			break
		}
		off = end + 1
	}
	return para.end(&cells, &work)
}

// paragraphScan is what CheckBody counts of a run of lines without a
// blank one, which holds every paragraph goldmark finds in it.
type paragraphScan struct {
	lines    int // so far; 0 when outside a run
	first    int // the run's first line, from 0
	bytes    int
	markers  int
	prevCols int // columns the previous line could head
	tables   []tableCandidate
}

// tableCandidate is a possible delimiter row: a table under it would
// have cols columns from its header, at line at, to the run's end.
type tableCandidate struct{ cols, at int }

// add counts line l of the run, whose container markers end at content.
func (p *paragraphScan) add(line int, l []byte, content int) {
	if p.lines == 0 {
		*p = paragraphScan{first: line, tables: p.tables[:0]}
	}
	cols := 1 + bytes.Count(l, []byte("|"))
	if p.lines > 0 && isDelimiterRow(l) {
		p.tables = append(p.tables, tableCandidate{cols: min(p.prevCols, cols), at: line - 1})
	}
	p.prevCols = cols
	p.lines++
	p.bytes += len(l) + 1
	p.markers += countMarkers(l[min(content, len(l)):])
}

// inlineMarkers are the bytes that open or close inline markup.
const inlineMarkers = "[](*_~`<"

// countMarkers counts the inline markers of a line's content, except
// those a backslash escapes. Without a backslash, which prose rarely
// has, each marker is counted with bytes.Count, which is vectorised: a
// few instructions per 32 bytes instead of a few per byte.
func countMarkers(seg []byte) int {
	n := 0
	if bytes.IndexByte(seg, '\\') < 0 {
		for i := range len(inlineMarkers) {
			n += bytes.Count(seg, []byte{inlineMarkers[i]})
		}
		return n
	}
	for i := 0; i < len(seg); i++ {
		switch seg[i] {
		case '\\':
			i++ // an escaped character is text
		case '[', ']', '(', '*', '_', '~', '`', '<':
			n++
		}
	}
	return n
}

// end adds the run's table cells and inline work to the body's, and
// reports a limit they exceed.
func (p *paragraphScan) end(cells, work *int) *BodyLimitError {
	if p.lines == 0 {
		return nil
	}
	// goldmark makes at most one table of a paragraph, under the first
	// delimiter row that matches its header; it pads every row after it.
	last := p.first + p.lines - 1
	most, at := 0, 0
	for _, t := range p.tables {
		if n := t.cols * (last - t.at + 1); n > most {
			most, at = n, t.at
		}
	}
	p.lines = 0
	if *cells += most; *cells > MaxTableCells {
		return &BodyLimitError{Limit: "table cells", Line: at + 1, Column: 1, Got: *cells, Max: MaxTableCells,
			Detail: fmt.Sprintf("the table here has %d cells once every row is padded to its header's columns", most),
			Help:   fmt.Sprintf("Keep the body's tables under %d cells in all (columns of the header × rows); split a wide or long table, or move the data to a file the SIP links to.", MaxTableCells)}
	}
	if *work += p.markers * p.bytes; *work > MaxInlineWork {
		return &BodyLimitError{Limit: "inline markup", Line: p.first + 1, Column: 1, Got: *work, Max: MaxInlineWork,
			Detail: fmt.Sprintf("the paragraph here has %d markers of links, emphasis or code (brackets, parentheses, *, _, ~, backticks, <) in %d bytes", p.markers, p.bytes),
			Help:   "Separate long paragraphs or tables with blank lines, and escape literal brackets, asterisks and underscores with a backslash; the markers of each paragraph times its length in bytes, summed over the body, must stay under the limit."}
	}
	return nil
}

// nesting is how many containers a line could be inside, counted from
// its start: each '>' and list marker, and every two columns of
// indentation other than the space after a marker; col is where its
// content starts, or where the count passes the limit.
func nesting(l []byte) (depth, col int) {
	width := 0                  // columns of indentation
	marker := func(i int) int { // depth++ for the marker ending at i, and the index of the space after it
		depth++
		if i+1 < len(l) && (l[i+1] == ' ' || l[i+1] == '\t') {
			return i + 1
		}
		return i
	}
	for i := 0; i < len(l); i++ {
		switch c := l[i]; {
		case c == ' ':
			width++
		case c == '\t':
			width += 4 - width%4
		case c == '>':
			i = marker(i)
		case c == '-' || c == '+' || c == '*':
			if i+1 < len(l) && l[i+1] != ' ' && l[i+1] != '\t' {
				return depth + width/2, i + 1
			}
			i = marker(i)
		case c >= '0' && c <= '9':
			j := i
			for j < len(l) && j-i < 9 && l[j] >= '0' && l[j] <= '9' {
				j++
			}
			if j >= len(l) || l[j] != '.' && l[j] != ')' || j+1 < len(l) && l[j+1] != ' ' && l[j+1] != '\t' {
				return depth + width/2, i + 1
			}
			i = marker(j)
		default:
			return depth + width/2, i + 1
		}
		if depth+width/2 > MaxBodyNesting {
			return depth + width/2, i + 1
		}
	}
	return depth + width/2, len(l) + 1
}

// isBlank reports whether a line holds only spaces and tabs; goldmark
// ends every paragraph at such a line.
func isBlank(l []byte) bool {
	for _, c := range l {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// isDelimiterRow reports whether a line could be a table's delimiter
// row: after container markers and spaces, only '|', '-', ':', spaces
// and tabs, with a '-'.
func isDelimiterRow(l []byte) bool {
	dash := false
	for _, c := range l {
		switch c {
		case '-':
			dash = true
		case '|', ':', ' ', '\t', '\r', '>':
		default:
			return false
		}
	}
	return dash
}
