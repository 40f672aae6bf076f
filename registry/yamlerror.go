package registry

import (
	"regexp"
	"strconv"
	"strings"
)

// yamlSyntaxError is a YAML syntax error placed on the character it is
// about. yaml.v3 reports a line only, and for many errors the line where
// the enclosing construct began (an unclosed quote is reported where the
// parser gave up, a tab on the line before it), so the offending
// character is found again here from the kind of error, with yaml.v3's
// line as the place to start looking.
type yamlSyntaxError struct {
	line, column int // in the frontmatter, from 1
	message      string
}

var yamlLineRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// locateYAMLError places err, an error of yaml.v3 decoding fm.
func locateYAMLError(fm []byte, err error) yamlSyntaxError {
	hint, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		if m[1] != "" {
			hint, _ = strconv.Atoi(m[1])
		}
		msg = m[2]
	}
	y := yamlLines(strings.Split(string(fm), "\n"))
	hint = min(max(hint, 1), len(y))
	var line, col int
	switch {
	case strings.Contains(msg, "tab character"):
		line, col = y.leadingTab(hint - 1)
	case strings.Contains(msg, "cannot start any token"):
		if line, col = y.leadingTab(hint - 1); line == 0 {
			line, col = y.badTokenStart(hint)
		}
	case strings.Contains(msg, "did not find expected ',' or"):
		line, col = y.unclosedFlow()
	case strings.Contains(msg, "unknown escape character"):
		line, col = y.badEscape(hint)
	case strings.Contains(msg, "mapping values are not allowed"):
		line, col = y.strayColon(hint)
	case strings.Contains(msg, "unexpected end of stream"),
		strings.Contains(msg, "did not find expected"),
		strings.Contains(msg, "could not find expected ':'"),
		strings.Contains(msg, "block sequence entries are not allowed"):
		if line, col = y.unclosedQuote(hint + 1); line == 0 {
			if line, col = y.unclosedFlow(); line == 0 {
				line, col = y.badIndent()
			}
		}
	}
	if line == 0 {
		line, col = hint, y.firstColumn(hint)
	}
	return yamlSyntaxError{line: line, column: col, message: "YAML syntax error: " + msg}
}

// yamlLines are the frontmatter's lines; methods take and return lines
// and columns counted from 1 (0 when nothing was found).
type yamlLines []string

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

func (y yamlLines) firstColumn(line int) int {
	if line < 1 || line > len(y) {
		return 1
	}
	return len(y[line-1]) - len(strings.TrimLeft(y[line-1], " \t")) + 1
}

// leadingTab finds the first tab in a line's indentation, from line from
// on (and failing that, anywhere).
func (y yamlLines) leadingTab(from int) (int, int) {
	for _, start := range []int{max(from, 1), 1} {
		for i := start - 1; i < len(y); i++ {
			lead := y[i][:len(y[i])-len(strings.TrimLeft(y[i], " \t"))]
			if j := strings.IndexByte(lead, '\t'); j >= 0 {
				return i + 1, j + 1
			}
		}
	}
	return 0, 0
}

// badTokenStart finds a value starting with a character YAML reserves
// (@ or `) on the line.
func (y yamlLines) badTokenStart(line int) (int, int) {
	for i := line - 1; i < len(y) && i <= line; i++ {
		if i < 0 {
			continue
		}
		s := y[i]
		for j := 0; j < len(s); j++ {
			if (s[j] == '@' || s[j] == '`') && (j == 0 || strings.ContainsRune(" \t[{,:-", rune(s[j-1]))) {
				return i + 1, j + 1
			}
		}
	}
	return 0, 0
}

// scan walks the characters of line i outside quoted strings and
// comments, calling f with each character's index; quotes left open at
// the end of the line are reported by open (the index of the quote).
func (y yamlLines) scan(i int, f func(j int, c byte) bool) (open int) {
	s := y[i]
	quote, open := byte(0), -1
	for j := 0; j < len(s); j++ {
		c := s[j]
		switch {
		case quote == '"' && c == '\\':
			j++
		case quote == '\'' && c == '\'' && j+1 < len(s) && s[j+1] == '\'':
			j++
		case quote != 0 && c == quote:
			quote, open = 0, -1
		case quote != 0:
		case (c == '"' || c == '\'') && startsScalar(s, j):
			quote, open = c, j
		case c == '#' && (j == 0 || s[j-1] == ' ' || s[j-1] == '\t'):
			return -1
		default:
			if !f(j, c) {
				return -1
			}
		}
	}
	return open
}

// startsScalar reports whether a quote at s[j] opens a quoted scalar
// (rather than sitting inside a plain one, as in don't).
func startsScalar(s string, j int) bool {
	k := j - 1
	for k >= 0 && (s[k] == ' ' || s[k] == '\t') {
		k--
	}
	return k < 0 || strings.IndexByte(":-[{,?", s[k]) >= 0
}

// unclosedQuote finds the first quoted scalar that is not closed on its
// own line, up to line last.
func (y yamlLines) unclosedQuote(last int) (int, int) {
	for i := 0; i < len(y) && i < last; i++ {
		if open := y.scan(i, func(int, byte) bool { return true }); open >= 0 {
			return i + 1, open + 1
		}
	}
	return 0, 0
}

// unclosedFlow finds the first [ or { that is never closed.
func (y yamlLines) unclosedFlow() (int, int) {
	type at struct{ line, col int }
	var stack []at
	for i := range y {
		y.scan(i, func(j int, c byte) bool {
			switch c {
			case '[', '{':
				stack = append(stack, at{i + 1, j + 1})
			case ']', '}':
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
			}
			return true
		})
	}
	if len(stack) == 0 {
		return 0, 0
	}
	return stack[0].line, stack[0].col
}

// validEscapes are the characters YAML allows after a backslash in a
// double-quoted scalar.
const validEscapes = "0abt\tnvfre \"/\\N_LPxuU"

// badEscape finds a backslash followed by a character YAML does not
// allow there, in a double-quoted scalar from line on.
func (y yamlLines) badEscape(line int) (int, int) {
	inQuote := false
	for i := max(line-1, 0); i < len(y); i++ {
		s := y[i]
		for j := 0; j < len(s); j++ {
			switch c := s[j]; {
			case !inQuote && c == '"' && startsScalar(s, j):
				inQuote = true
			case !inQuote && c == '#' && (j == 0 || s[j-1] == ' '):
				j = len(s)
			case inQuote && c == '"':
				inQuote = false
			case inQuote && c == '\\':
				if j+1 < len(s) && strings.IndexByte(validEscapes, s[j+1]) < 0 {
					return i + 1, j + 1
				}
				j++
			}
		}
	}
	return 0, 0
}

// strayColon finds the `: ` that YAML refuses on the line: the second one
// when a line has two (a: b: c), else the only one (a key indented under
// a plain value).
func (y yamlLines) strayColon(line int) (int, int) {
	var colons []int
	y.scan(line-1, func(j int, c byte) bool {
		s := y[line-1]
		if c == ':' && (j+1 == len(s) || s[j+1] == ' ' || s[j+1] == '\t') {
			colons = append(colons, j)
		}
		return true
	})
	switch {
	case len(colons) >= 2:
		return line, colons[1] + 1
	case len(colons) == 1:
		return line, colons[0] + 1
	}
	return 0, 0
}

// badIndent finds the first line whose indentation fits no open block:
// deeper than its block without a key that opens one, or between two
// levels, or a list item where keys are (and the other way round).
func (y yamlLines) badIndent() (int, int) {
	type block struct {
		indent int
		seq    bool
	}
	var stack []block
	opened := true    // the previous line opened a nested block
	scalarAbove := -1 // indentation of a key whose block scalar runs on
	for i, s := range y {
		t := strings.TrimSpace(s)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		ind := indentOf(s)
		if scalarAbove >= 0 {
			if ind > scalarAbove {
				continue
			}
			scalarAbove = -1
		}
		seq := t == "-" || strings.HasPrefix(t, "- ")
		key := mapKeyEnd(t) >= 0
		for len(stack) > 0 && stack[len(stack)-1].indent > ind {
			stack = stack[:len(stack)-1]
		}
		switch top := len(stack) - 1; {
		case top < 0 || stack[top].indent < ind:
			if !opened && top >= 0 {
				if !key && !seq {
					continue // a plain scalar running on
				}
				return i + 1, ind + 1
			}
			stack = append(stack, block{ind, seq})
		case stack[top].seq != seq && (seq || key):
			if !(seq && opened) {
				return i + 1, ind + 1
			}
			stack = append(stack, block{ind, seq})
		}
		body := t
		if seq {
			body = strings.TrimSpace(strings.TrimPrefix(t, "-"))
		}
		value := ""
		if k := mapKeyEnd(body); k >= 0 {
			value = strings.TrimSpace(body[k+1:])
		} else if seq {
			value = body
		}
		value = strings.TrimSpace(strings.SplitN(value, " #", 2)[0])
		opened = (key || seq) && value == "" || (seq && mapKeyEnd(body) >= 0)
		if strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">") {
			scalarAbove = ind
		}
	}
	return 0, 0
}

// mapKeyEnd is the index of the colon ending a plain or quoted key at the
// start of t, or -1.
func mapKeyEnd(t string) int {
	if t == "" || strings.ContainsRune("[{#&*!|>%@`", rune(t[0])) {
		return -1
	}
	for j := 0; j < len(t); j++ {
		if t[j] == ':' && (j+1 == len(t) || t[j+1] == ' ') {
			return j
		}
		if t[j] == ' ' && j+1 < len(t) && t[j+1] == '#' {
			return -1
		}
	}
	return -1
}
