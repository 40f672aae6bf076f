package registry

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sipregistry/sip/registry/internal/yaml"
)

// DraftFields are a new SIP's parts as a form collects them: the
// frontmatter's fields, the handler's config as YAML, and the Markdown
// body. File writes them as a SIP file.
type DraftFields struct {
	Number        int
	ID            string
	Name          string
	Module        string
	Type          Type
	Status        Status
	Prerequisites []string
	Author        string
	CreatedAt     string
	UpdatedAt     string
	Version       string
	Points        string
	Handler       string
	// Config is the `config` mapping as YAML; empty for none.
	Config string
	Body   string
}

// exampleConfigs are what each type's config looks like, to start from
// (the same as `sip new` writes).
var exampleConfigs = map[Type]string{
	TypeComplexBenchmark: `passing_score: 70
time_limit_minutes: 30
questions:
  - id: q1
    prompt: "Replace with a multiple-choice question."
    choices: ["The correct answer", "A plausible wrong answer", "Another wrong answer"]
    answer: "The correct answer"
    points: 10
  - id: q2
    prompt: "Replace with a free-response question."
    rubric: "What a full-marks answer contains."
    points: 20
`,
	TypeProctored: `instructions: "What the proctor does in the session, and how to grade."
`,
	TypeLiveClassWork: `min_participants: 2
max_participants: 4
duration_minutes: 30
shared_grade: true
problem: "The task the participants solve together."
`,
	TypeAgentCertification: `passing_score: 70
nonce_validity_minutes: 30
prompts:
  - id: first-prompt
    category: replace_me
    description: "What this prompt tests."
    messages:
      - role: user
        content: "Replace with the message the agent must answer."
    should:
      - "What a good answer does"
      - "Does NOT do what a bad answer does"
rubric:
  - prompt_id: first-prompt
    criteria: "How the judge scores the answer."
    weight: 1.0
    max_score: 100
`,
}

// NewDraftFields are the fields a new SIP of type t starts from: number n,
// a draft at version 0.1.0 dated today, the type's first handler, an
// example config and a body with the sections the type requires.
func NewDraftFields(t Type, n int, now time.Time) DraftFields {
	day := now.UTC().Format(time.DateOnly)
	f := DraftFields{Number: n, Type: t, Status: StatusDraft, Module: "general", CreatedAt: day, UpdatedAt: day,
		Version: "0.1.0", Points: "10", Config: exampleConfigs[t]}
	if t == TypeProcess {
		f.Module = "process"
	}
	if names := HandlersFor(t); len(names) > 0 {
		f.Handler = names[0]
	}
	var body strings.Builder
	body.WriteString("# SIP-" + strconv.Itoa(n) + ": Name\n\nOne paragraph: what this SIP is for.\n")
	for _, s := range (BodyOptions{}).sectionsFor(t) {
		title, _, _ := strings.Cut(s, " | ")
		body.WriteString("\n## " + title + "\n\nWrite this section.\n")
	}
	f.Body = body.String()
	return f
}

// ErrDraftConfig says a draft's config is not a YAML mapping the
// generator takes.
var ErrDraftConfig = errors.New("config")

// File writes the fields as a SIP file. Every value is a YAML node the
// encoder quotes as it needs, so no field's text can add fields, end the
// frontmatter or become an anchor. The config must be one YAML mapping
// without anchors, aliases or tags.
func (f DraftFields) File() ([]byte, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	}
	str := func(s string) *yaml.Node {
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
		if strings.ContainsAny(s, "\n\r") {
			// A block scalar's lines could read as the end of the
			// frontmatter (---); a quoted one is one line.
			n.Style = yaml.DoubleQuotedStyle
		}
		return n
	}
	add("sip", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(f.Number)})
	add("id", str(f.ID))
	add("name", str(f.Name))
	add("module", str(f.Module))
	add("type", str(string(f.Type)))
	add("status", str(string(f.Status)))
	pre := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, p := range f.Prerequisites {
		pre.Content = append(pre.Content, str(p))
	}
	add("prerequisites", pre)
	add("author", str(f.Author))
	add("created_at", date(f.CreatedAt))
	add("updated_at", date(f.UpdatedAt))
	add("version", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: f.Version, Style: yaml.DoubleQuotedStyle})
	if p, err := strconv.ParseFloat(strings.TrimSpace(f.Points), 64); err == nil && p == float64(int64(p)) {
		add("points", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(p), 10)})
	} else if err == nil {
		add("points", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(p, 'f', -1, 64)})
	} else {
		add("points", str(f.Points))
	}
	if strings.TrimSpace(f.Config) != "" {
		cfg, err := configNode(f.Config)
		if err != nil {
			return nil, err
		}
		add("config", cfg)
	}
	if f.Handler != "" {
		add("executable", &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("handler"), str(f.Handler)}})
	}
	var buf bytes.Buffer
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	buf.WriteString("---\n\n")
	body := strings.ReplaceAll(f.Body, "\r\n", "\n")
	buf.WriteString(strings.TrimLeft(body, "\n"))
	if !strings.HasSuffix(body, "\n") {
		buf.WriteString("\n")
	}
	return buf.Bytes(), nil
}

// date is a date or timestamp as a plain YAML scalar when it is one, and
// otherwise the text as a string (which the rules then refuse).
func date(s string) *yaml.Node {
	s = strings.TrimSpace(s)
	if _, err := time.Parse(time.DateOnly, s); err == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: s}
	}
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: s}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// configNode reads a config written as YAML: one mapping, small, without
// anchors, aliases or explicit tags.
func configNode(text string) (*yaml.Node, error) {
	if len(text) > MaxFileSize {
		return nil, fmt.Errorf("%w: over %d bytes", ErrDraftConfig, MaxFileSize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrDraftConfig, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: write it as a mapping of fields (key: value lines)", ErrDraftConfig)
	}
	var bad error
	count := 0
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		count++
		switch {
		case bad != nil:
			return
		case n.Kind == yaml.AliasNode || n.Anchor != "":
			bad = fmt.Errorf("%w: anchors and aliases (& and *) are not taken; write each value out", ErrDraftConfig)
		case n.Style&yaml.TaggedStyle != 0:
			bad = fmt.Errorf("%w: tags (!!…) are not taken", ErrDraftConfig)
		case depth > 32 || count > 100000:
			bad = fmt.Errorf("%w: nested too deep or too large", ErrDraftConfig)
		}
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(doc.Content[0], 0)
	if bad != nil {
		return nil, bad
	}
	n := doc.Content[0]
	n.Style = 0
	clearComments(n)
	return n, nil
}

// clearComments drops comments and quotes every multi-line string: a
// block scalar's lines could read as the end of the frontmatter.
func clearComments(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if n.Kind == yaml.ScalarNode && strings.ContainsAny(n.Value, "\n\r") {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		clearComments(c)
	}
}

// EditDraft is a SIP file prepared for a change: version raised by a
// patch and updated_at set to now, in place, the rest of the file as it
// is. A file whose version or updated_at cannot be found is returned
// unchanged (the rules then say what is wrong).
func EditDraft(content []byte, now time.Time) []byte {
	d := Parse("edit.md", content)
	if d.SIP == nil {
		return content
	}
	lines := strings.SplitAfter(string(content), "\n")
	set := func(field, value string) {
		at, ok := d.spans[field]
		if !ok || at.Line < 1 || at.Line > len(lines) || at.Column < 1 {
			return
		}
		l := lines[at.Line-1]
		if at.Column-1 > len(l) {
			return
		}
		nl := ""
		if strings.HasSuffix(l, "\n") {
			nl = "\n"
		}
		lines[at.Line-1] = l[:at.Column-1] + value + nl
	}
	if d.SIP.Version != "" {
		set("version", `"`+nextPatch(d.SIP.Version)+`"`)
	}
	set("updated_at", now.UTC().Truncate(time.Second).Format(time.RFC3339))
	return []byte(strings.Join(lines, ""))
}
