package registry

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Limits that keep the engine fast and safe on hostile input. They are
// documented in docs/rules.md.
const (
	// MaxFileSize is the largest SIP file the engine reads.
	MaxFileSize = 1 << 20
	// MaxNodes caps the YAML nodes visited in one frontmatter, counting
	// every expansion of an alias, so alias bombs stop early.
	MaxNodes = 100_000
	// MaxDepth caps the nesting of maps and lists in the frontmatter.
	MaxDepth = 64
)

// decoder walks a frontmatter's YAML nodes and records a problem for each
// thing that does not fit the schema. Lines are shifted by offset so they
// count from the top of the file.
type decoder struct {
	ps     *problems
	offset int
	budget int
	broken bool // the node budget or depth limit was hit; stop reporting
}

func newDecoder(ps *problems, offset int) *decoder {
	return &decoder{ps: ps, offset: offset, budget: MaxNodes}
}

// span locates n in the file.
func (d *decoder) span(n *yaml.Node) Span {
	if n == nil {
		return Span{Line: d.offset, Column: 1}
	}
	return Span{Line: n.Line + d.offset - 1, Column: n.Column, EndLine: endLine(n, 0) + d.offset - 1}
}

// endLine is the last line a node covers. It does not follow aliases.
func endLine(n *yaml.Node, depth int) int {
	end := n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			end += strings.Count(strings.TrimRight(n.Value, "\n"), "\n") + 1
		}
	case yaml.MappingNode, yaml.SequenceNode, yaml.DocumentNode:
		if len(n.Content) > 0 && depth < MaxDepth {
			end = max(end, endLine(n.Content[len(n.Content)-1], depth+1))
		}
	}
	return end
}

// resolve follows aliases and charges the node budget. It returns nil once
// the budget is spent.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > MaxDepth {
			return nil
		}
		n = n.Alias
	}
	if n == nil {
		return nil
	}
	d.budget--
	if d.budget < 0 {
		if !d.broken {
			d.broken = true
			d.ps.errorf("yaml-syntax", d.span(n), "Write the values out instead of repeating anchors and aliases.",
				"the frontmatter expands to more than %d YAML nodes (aliases included)", MaxNodes)
		}
		return nil
	}
	return n
}

// isNull reports whether n is absent or an explicit YAML null.
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return "a string"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "null"
		case "!!timestamp":
			return "a timestamp"
		}
		return "a scalar"
	}
	return "a value"
}

func (d *decoder) typeError(n *yaml.Node, field, want string) {
	hint := "Write " + field + " as " + want + "."
	if n.Kind == yaml.ScalarNode && want == "a string" {
		hint = "Quote the value: " + field + ": \"" + n.Value + "\"."
	}
	d.ps.errorf("field-type", d.span(n), hint, "%s must be %s, not %s", field, want, kindName(n))
}

// str reads a string scalar. Timestamps are accepted as their text.
func (d *decoder) str(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!timestamp") {
		d.typeError(n, field, "a string")
		return "", false
	}
	return n.Value, true
}

// integer reads an integer scalar.
func (d *decoder) integer(n *yaml.Node, field string) (int, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		var v int64
		if err := n.Decode(&v); err == nil && v >= math.MinInt32 && v <= math.MaxInt32 {
			return int(v), true
		}
		d.ps.errorf("field-type", d.span(n), "Use a smaller integer.", "%s: %s is out of range", field, n.Value)
		return 0, false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < math.MaxInt32 {
			return int(f), true
		}
	}
	d.typeError(n, field, "an integer")
	return 0, false
}

// number reads an integer or floating-point scalar.
func (d *decoder) number(n *yaml.Node, field string) (float64, bool) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		var v float64
		if err := n.Decode(&v); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v, true
		}
	}
	d.typeError(n, field, "a number")
	return 0, false
}

func (d *decoder) boolean(n *yaml.Node, field string) (bool, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var v bool
		if err := n.Decode(&v); err == nil {
			return v, true
		}
	}
	d.typeError(n, field, "true or false")
	return false, false
}

// list returns the resolved items of a sequence node.
func (d *decoder) list(n *yaml.Node, field string, depth int) ([]*yaml.Node, bool) {
	if n.Kind != yaml.SequenceNode {
		d.typeError(n, field, "a list")
		return nil, false
	}
	if depth > MaxDepth {
		d.tooDeep(n)
		return nil, false
	}
	items := make([]*yaml.Node, 0, len(n.Content))
	for _, c := range n.Content {
		if c = d.resolve(c); c == nil {
			return nil, false
		}
		items = append(items, c)
	}
	return items, true
}

func (d *decoder) tooDeep(n *yaml.Node) {
	if !d.broken {
		d.broken = true
		d.ps.errorf("yaml-syntax", d.span(n), "Flatten the structure.", "the frontmatter nests deeper than %d levels", MaxDepth)
	}
}

// object is a YAML map whose keys were checked for duplicates.
type object struct {
	d      *decoder
	node   *yaml.Node
	path   string // for messages, e.g. "config.prompts[2]"
	keys   []*yaml.Node
	values map[string]*yaml.Node
	keyOf  map[string]*yaml.Node
}

// object reads a map. Duplicate keys are reported and the first one wins,
// so a later copy cannot silently replace a reviewed value.
func (d *decoder) object(n *yaml.Node, path string, depth int) (*object, bool) {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, path, "a map")
		return nil, false
	}
	if depth > MaxDepth {
		d.tooDeep(n)
		return nil, false
	}
	o := &object{d: d, node: n, path: path, values: make(map[string]*yaml.Node, len(n.Content)/2), keyOf: make(map[string]*yaml.Node, len(n.Content)/2)}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := d.resolve(n.Content[i])
		v := d.resolve(n.Content[i+1])
		if k == nil || v == nil {
			return nil, false
		}
		if k.Kind != yaml.ScalarNode {
			d.ps.errorf("yaml-syntax", d.span(k), "Use plain words as keys.", "%s has a key that is %s", describe(path), kindName(k))
			continue
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			d.ps.errorf("yaml-syntax", d.span(k), "Write the keys out instead of merging them in.", "merge keys (<<) are not supported in SIP frontmatter")
			continue
		}
		if prev, dup := o.values[k.Value]; dup {
			d.ps.errorf("yaml-syntax", d.span(k), "Remove one of the two.",
				"key %q is defined twice in %s (first at line %d)", k.Value, describe(path), d.span(prev).Line)
			continue
		}
		o.keys = append(o.keys, k)
		o.values[k.Value] = v
		o.keyOf[k.Value] = k
	}
	return o, true
}

func describe(path string) string {
	if path == "" {
		return "the frontmatter"
	}
	return path
}

// get returns the value of key, or nil when it is absent or null.
func (o *object) get(key string) *yaml.Node {
	v := o.values[key]
	if isNull(v) {
		return nil
	}
	return v
}

// keySpan locates the key itself, e.g. the `rubric:` line of a list.
func (o *object) keySpan(key string) Span {
	if k := o.keyOf[key]; k != nil {
		s := o.d.span(k)
		if v := o.values[key]; v != nil {
			s.EndLine = max(s.EndLine, o.d.span(v).EndLine)
		}
		return s
	}
	return o.d.span(o.node)
}

func (o *object) field(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// unknown reports every key not in known, suggesting the closest known key.
func (o *object) unknown(known []string, sev Severity) {
	for _, k := range o.keys {
		if contains(known, k.Value) {
			continue
		}
		hint := "Remove it; known fields here are " + strings.Join(known, ", ") + "."
		msg := fmt.Sprintf("unknown field %q in %s", k.Value, describe(o.path))
		if s := suggest(k.Value, known); s != "" {
			hint = "Did you mean " + s + "?"
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		o.d.ps.add(sev, "field-unknown", o.d.span(k), hint, "%s", msg)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// toAny converts a node to JSON-compatible Go values for Config.Raw.
func (d *decoder) toAny(n *yaml.Node, depth int) any {
	if n = d.resolve(n); n == nil {
		return nil
	}
	if depth > MaxDepth {
		d.tooDeep(n)
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := d.resolve(n.Content[i])
			if k == nil {
				return nil
			}
			if _, dup := m[k.Value]; dup {
				continue
			}
			m[k.Value] = d.toAny(n.Content[i+1], depth+1)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			s = append(s, d.toAny(c, depth+1))
		}
		return s
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil
		case "!!bool", "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err == nil {
				if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
					return n.Value
				}
				return v
			}
		}
		return n.Value
	}
	return nil
}
