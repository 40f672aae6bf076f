package registry

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sipregistry/sip/registry/internal/yaml"
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
	// spans, when set, records where values the rules point at are
	// (Document.Span), such as each question's answer.
	spans map[string]Span
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

func (d *decoder) typeError(n *yaml.Node, field name, want string) {
	hint := "Write " + field.String() + " as " + want + "."
	if n.Kind == yaml.ScalarNode && want == "a string" {
		hint = "Quote the value: " + field.key + ": \"" + n.Value + "\"."
	}
	d.ps.errorf("field-type", d.span(n), hint, "%s must be %s, not %s", field, want, kindName(n))
}

// str reads a string scalar. Timestamps are accepted as their text.
func (d *decoder) str(n *yaml.Node, field name) (string, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!timestamp") {
		d.typeError(n, field, "a string")
		return "", false
	}
	return n.Value, true
}

// integer reads an integer scalar.
func (d *decoder) integer(n *yaml.Node, field name) (int, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		if v, ok := scalarInt(n); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			return int(v), true
		}
		d.ps.errorf("field-type", d.span(n), "Use a smaller integer.", "%s: %s is out of range", field, n.Value)
		return 0, false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
		if f, ok := scalarFloat(n); ok && f == math.Trunc(f) && math.Abs(f) < math.MaxInt32 {
			return int(f), true
		}
	}
	d.typeError(n, field, "an integer")
	return 0, false
}

// number reads an integer or floating-point scalar.
func (d *decoder) number(n *yaml.Node, field name) (float64, bool) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		if v, ok := scalarFloat(n); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v, true
		}
	}
	d.typeError(n, field, "a number")
	return 0, false
}

// scalarInt and scalarFloat read the common decimal forms directly and
// leave YAML's other spellings (0x, 0o, _, .inf) to yaml.v3, which is
// slower because it builds a decoder per call.
func scalarInt(n *yaml.Node) (int64, bool) {
	if plainDecimal(n.Value) {
		if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return v, true
		}
	}
	var v int64
	return v, n.Decode(&v) == nil
}

func scalarFloat(n *yaml.Node) (float64, bool) {
	if n.Tag == "!!int" {
		if v, ok := scalarInt(n); ok {
			return float64(v), true
		}
	}
	if v, err := strconv.ParseFloat(n.Value, 64); err == nil && !strings.ContainsAny(n.Value, "xXnNiI_") {
		return v, true
	}
	var v float64
	return v, n.Decode(&v) == nil
}

func (d *decoder) boolean(n *yaml.Node, field name) (bool, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		if v, ok := scalarBool(n.Value); ok {
			return v, true
		}
	}
	d.typeError(n, field, "true or false")
	return false, false
}

// list returns the resolved items of a sequence node.
func (d *decoder) list(n *yaml.Node, field name, depth int) ([]*yaml.Node, bool) {
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

// object is a YAML map whose keys were checked for duplicates. Most SIP
// maps have a handful of keys, so lookups scan a slice; a map index is
// built only for large ones.
type object struct {
	d     *decoder
	node  *yaml.Node
	path  name // for messages, e.g. config.prompts[2]
	keys  []*yaml.Node
	vals  []*yaml.Node
	index map[string]int // only when len(keys) > smallObject
}

const smallObject = 16

// object reads a map. Duplicate keys are reported and the first one wins,
// so a later copy cannot silently replace a reviewed value.
func (d *decoder) object(n *yaml.Node, path name, depth int) (*object, bool) {
	if n.Kind != yaml.MappingNode {
		d.typeError(n, path, "a map")
		return nil, false
	}
	if depth > MaxDepth {
		d.tooDeep(n)
		return nil, false
	}
	size := len(n.Content) / 2
	o := &object{d: d, node: n, path: path, keys: make([]*yaml.Node, 0, size), vals: make([]*yaml.Node, 0, size)}
	if size > smallObject {
		o.index = make(map[string]int, size)
	}
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
		if prev := o.find(k.Value); prev >= 0 {
			d.ps.errorf("yaml-syntax", d.span(k), "Remove one of the two.",
				"key %q is defined twice in %s (first at line %d)", k.Value, describe(path), d.span(o.keys[prev]).Line)
			continue
		}
		if o.index != nil {
			o.index[k.Value] = len(o.keys)
		}
		o.keys = append(o.keys, k)
		o.vals = append(o.vals, v)
	}
	return o, true
}

// find returns the position of key, or -1.
func (o *object) find(key string) int {
	if o.index != nil {
		if i, ok := o.index[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range o.keys {
		if k.Value == key {
			return i
		}
	}
	return -1
}

// value returns the value of key as written (null included), or nil.
func (o *object) value(key string) *yaml.Node {
	if i := o.find(key); i >= 0 {
		return o.vals[i]
	}
	return nil
}

func describe(path name) string {
	if path.isRoot() {
		return "the frontmatter"
	}
	return path.String()
}

// name locates a value in messages, e.g. config.prompts[2].id. It is
// spelled out only when a message needs it, so valid files cost nothing.
type name struct {
	parent *name
	key    string
	index  int // -1 unless the value is a list item
}

// root names the frontmatter itself.
var root = name{index: -1}

// top names a top-level field.
func top(key string) name { return name{key: key, index: -1} }

// item names the i-th entry of the list f.
func (f name) item(i int) name { f.index = i; return f }

func (f name) isRoot() bool { return f.parent == nil && f.key == "" }

func (f name) String() string {
	s := f.key
	if f.parent != nil && !f.parent.isRoot() {
		s = f.parent.String() + "." + f.key
	}
	if f.index >= 0 {
		s += "[" + strconv.Itoa(f.index) + "]"
	}
	return s
}

// get returns the value of key, or nil when it is absent or null.
func (o *object) get(key string) *yaml.Node {
	v := o.value(key)
	if isNull(v) {
		return nil
	}
	return v
}

// keySpan locates the key itself, e.g. the `rubric:` line of a list.
func (o *object) keySpan(key string) Span {
	if i := o.find(key); i >= 0 {
		s := o.d.span(o.keys[i])
		s.EndLine = max(s.EndLine, o.d.span(o.vals[i]).EndLine)
		return s
	}
	return o.d.span(o.node)
}

func (o *object) field(key string) name {
	return name{parent: &o.path, key: key, index: -1}
}

// unknown reports every key not in known, suggesting the closest known key.
// A key within typoDistance of a known one is an error whatever sev says:
// the known key it misspells silently takes its default, which changes
// what the SIP means.
func (o *object) unknown(known []string, sev Severity) {
	for _, k := range o.keys {
		if contains(known, k.Value) {
			continue
		}
		hint := "Remove it; known fields here are " + strings.Join(known, ", ") + "."
		msg := fmt.Sprintf("unknown field %q in %s", k.Value, describe(o.path))
		sev := sev
		if s, d := closest(k.Value, known); s != "" {
			hint = "Did you mean " + s + "?"
			msg += fmt.Sprintf(" (did you mean %q?)", s)
			if d <= typoDistance {
				sev = SeverityError
				hint = "Rename it to " + s + ": as written it is ignored and " + s + " keeps its default."
			}
		}
		o.d.ps.add(sev, "field-unknown", o.d.span(k), hint, "%s", msg)
	}
}

// deprecatedConfigKeys are config keys spelled in camelCase by the first
// certification SIPs, and their snake_case names: every key of a SIP is
// snake_case now. The old spellings still work, with a warning.
var deprecatedConfigKeys = map[string]deprecatedKey{}

// deprecatedKey is a deprecated key's new name and the warning's text,
// written once: SafeMolt's corpus has eight such keys per file.
type deprecatedKey struct{ name, hint, message string }

func init() {
	for old, name := range map[string]string{
		"passingScore":         "passing_score",
		"nonceValidityMinutes": "nonce_validity_minutes",
		"promptId":             "prompt_id",
		"maxScore":             "max_score",
	} {
		deprecatedConfigKeys[old] = deprecatedKey{name: name, hint: "Rename it to " + name + ".",
			message: fmt.Sprintf("%q is the old spelling of %q; it still works, but will stop working in a future version", old, name)}
	}
}

// renameDeprecated reads each deprecated key as its new name, warning
// (config-deprecated) at the old one; both at once is an error, since
// which one counts would be a guess.
func (o *object) renameDeprecated() {
	for i, k := range o.keys {
		dk, ok := deprecatedConfigKeys[k.Value]
		if !ok {
			continue
		}
		name := dk.name
		if o.find(name) >= 0 {
			o.d.ps.errorf("config-invalid", o.d.span(k), "Keep only "+name+".",
				"%s sets both %q and its old spelling %q", describe(o.path), name, k.Value)
			continue
		}
		o.d.ps.addText(SeverityWarning, "config-deprecated", o.d.span(k), dk.hint, dk.message)
		renamed := *k
		renamed.Value = name
		o.keys[i] = &renamed
		if o.index != nil {
			delete(o.index, k.Value)
			o.index[name] = i
		}
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

// measure walks the whole tree once, expanding aliases, so that alias
// bombs and runaway nesting are reported before anything is decoded. It
// allocates nothing.
func (d *decoder) measure(n *yaml.Node, depth int) bool {
	if n = d.resolve(n); n == nil {
		return false
	}
	if depth > MaxDepth {
		d.tooDeep(n)
		return false
	}
	for _, c := range n.Content {
		if !d.measure(c, depth+1) {
			return false
		}
	}
	return true
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
		case "!!int":
			if v, ok := scalarInt(n); ok {
				return v
			}
			fallthrough
		case "!!bool", "!!float":
			if n.Tag == "!!float" {
				if v, ok := scalarFloat(n); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
					return v
				}
			}
			if n.Tag == "!!bool" {
				if v, ok := scalarBool(n.Value); ok {
					return v
				}
			}
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

// scalarBool reads the YAML 1.2 booleans yaml.v3 tags as !!bool.
func scalarBool(s string) (bool, bool) {
	switch s {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

// plainDecimal reports whether s is an integer with no leading zero, which
// YAML and strconv read the same way ("0755" is octal to YAML 1.1).
func plainDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "0" {
		return true
	}
	if s == "" || s[0] < '1' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
