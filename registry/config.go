package registry

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/sipregistry/sip/registry/internal/yaml"
	"github.com/sipregistry/sip/registry/seal"
)

// Defaults for optional handler settings.
const (
	DefaultPoAWTimeoutSeconds     = 15
	DefaultNonceValidityMinutes   = 30
	DefaultBenchmarkTimeLimitMins = 30
)

var messageRoles = []string{"system", "user", "assistant"}

// agentIDRE is an agent id as NewAgent makes it.
var agentIDRE = regexp.MustCompile(`^agt_[0-9a-f]{16}$`)

// req returns the value of a key the handler requires, reporting
// config-invalid when it is missing.
func (o *object) req(key string) *yaml.Node {
	v := o.get(key)
	if v == nil {
		o.d.ps.errorf("config-invalid", o.d.span(o.node), "Add `"+key+":` to "+describe(o.path)+".",
			"%s is required", o.field(key))
	}
	return v
}

// reqStr returns a required non-empty string.
func (o *object) reqStr(key string) (string, *yaml.Node) {
	v := o.req(key)
	if v == nil {
		return "", nil
	}
	s, ok := o.d.str(v, o.field(key))
	if !ok {
		return "", nil
	}
	if strings.TrimSpace(s) == "" {
		o.d.ps.errorf("config-invalid", o.d.span(v), "Give it a value.", "%s is empty", o.field(key))
		return "", nil
	}
	return s, v
}

// optStr returns an optional string.
func (o *object) optStr(key string) string {
	if v := o.get(key); v != nil {
		s, _ := o.d.str(v, o.field(key))
		return s
	}
	return ""
}

// intIn reads an integer in [lo, hi]; def is used when the key is absent.
func (o *object) intIn(key string, lo, hi, def int, required bool) int {
	v := o.get(key)
	if v == nil {
		if required {
			o.req(key)
		}
		return def
	}
	n, ok := o.d.integer(v, o.field(key))
	if !ok {
		return def
	}
	if n < lo || n > hi {
		o.d.ps.errorf("config-invalid", o.d.span(v), "Use a value "+rangeText(float64(lo), float64(hi))+".",
			"%s must be %s, not %d", o.field(key), rangeText(float64(lo), float64(hi)), n)
		return def
	}
	return n
}

// numberIn reads a number in [lo, hi] (or > lo when open is set).
func (o *object) numberIn(key string, lo, hi, def float64, open, required bool) float64 {
	v := o.get(key)
	if v == nil {
		if required {
			o.req(key)
		}
		return def
	}
	n, ok := o.d.number(v, o.field(key))
	if !ok {
		return def
	}
	if n > hi || n < lo || (open && n == lo) {
		want := rangeText(lo, hi)
		if open {
			want = "greater than " + fmtNum(lo)
		}
		o.d.ps.errorf("config-invalid", o.d.span(v), "Use a value "+want+".", "%s must be %s, not %s", o.field(key), want, fmtNum(n))
		return def
	}
	return n
}

func rangeText(lo, hi float64) string {
	if hi >= math.MaxInt32 {
		return "at least " + fmtNum(lo)
	}
	return "between " + fmtNum(lo) + " and " + fmtNum(hi)
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// items reads a required non-empty list of maps.
func (o *object) items(key string, known []string) []*object {
	v := o.req(key)
	if v == nil {
		return nil
	}
	list, ok := o.d.list(v, o.field(key), 2)
	if !ok {
		return nil
	}
	if len(list) == 0 {
		o.d.ps.errorf("config-invalid", o.d.span(v), "Add at least one entry.", "%s is empty", o.field(key))
	}
	var out []*object
	for i, item := range list {
		it, ok := o.d.object(item, o.field(key).item(i), 3)
		if !ok {
			continue
		}
		it.renameDeprecated()
		it.unknown(known, SeverityWarning)
		out = append(out, it)
	}
	return out
}

// strings reads a list of non-empty strings.
func (o *object) strings(key string, required bool) []string {
	v := o.get(key)
	if v == nil {
		if required {
			o.req(key)
		}
		return nil
	}
	list, ok := o.d.list(v, o.field(key), 4)
	if !ok {
		return nil
	}
	if len(list) == 0 && required {
		o.d.ps.errorf("config-invalid", o.d.span(v), "Add at least one entry.", "%s is empty", o.field(key))
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		if s, ok := o.d.str(item, o.field(key).item(i)); ok {
			out = append(out, s)
		}
	}
	return out
}

func requireConfig(d *decoder, cfg *object, at Span, what string) bool {
	if cfg == nil {
		d.ps.errorf("config-invalid", at, "Add a `config:` map with "+what+".", "config is required: this handler needs %s", what)
		return false
	}
	return true
}

func decodePoAW(d *decoder, cfg *object, _ *yaml.Node, out *Config, _ Span) {
	c := &PoAWConfig{TimeoutSeconds: DefaultPoAWTimeoutSeconds}
	if cfg != nil {
		c.TimeoutSeconds = cfg.intIn("timeout_seconds", 1, 300, DefaultPoAWTimeoutSeconds, false)
	}
	out.PoAW = c
}

func decodeProctor(d *decoder, cfg *object, _ *yaml.Node, out *Config, _ Span) {
	c := &ProctorConfig{DurationMinutes: DefaultProctorMinutes, ClaimWithinMinutes: DefaultClaimWithinMinutes}
	if cfg != nil {
		c.ClaimWithinMinutes = cfg.intIn("claim_within_minutes", 1, 7*24*60, DefaultClaimWithinMinutes, false)
		c.Instructions = cfg.optStr("instructions")
		c.DurationMinutes = cfg.intIn("duration_minutes", 1, 7*24*60, DefaultProctorMinutes, false)
		if v := cfg.get("allow_unclaimed"); v != nil {
			c.AllowUnclaimed, _ = d.boolean(v, cfg.field("allow_unclaimed"))
		}
	}
	out.Proctor = c
	out.Proctoring = decodeProctoring(d, cfg)
}

// decodeProctoring reads who may proctor: config.proctor (qualification,
// proctors) and config.min_messages.
func decodeProctoring(d *decoder, cfg *object) *ProctoringConfig {
	p := &ProctoringConfig{}
	if cfg == nil {
		return p
	}
	p.MinMessages = cfg.intIn("min_messages", 0, 1000, 0, false)
	v := cfg.get("proctor")
	if v == nil {
		return p
	}
	o, ok := d.object(v, cfg.field("proctor"), 3)
	if !ok {
		return p
	}
	o.unknown([]string{"qualification", "proctors"}, SeverityWarning)
	p.Qualification = strings.TrimSpace(o.optStr("qualification"))
	if v := o.get("proctors"); v != nil {
		for i, id := range o.strings("proctors", false) {
			if !agentIDRE.MatchString(id) {
				d.ps.errorf("config-invalid", d.span(v), "Name each proctor by its agent id (agt_ and 16 hex digits; GET /api/v1/agents/{name} shows it): a name not yet taken could be registered by anyone.",
					"%s is not an agent id: %q", o.field("proctors").item(i), id)
				continue
			}
			p.Proctors = append(p.Proctors, id)
		}
	}
	return p
}

func decodeCollaboration(d *decoder, cfg *object, _ *yaml.Node, out *Config, at Span) {
	if !requireConfig(d, cfg, at, "min_participants and duration_minutes") {
		return
	}
	c := &CollaborationConfig{SharedGrade: true}
	c.MinParticipants = cfg.intIn("min_participants", 2, math.MaxInt32, 0, true)
	c.MaxParticipants = c.MinParticipants
	if v := cfg.get("max_participants"); v != nil {
		if n, ok := d.integer(v, cfg.field("max_participants")); ok {
			if c.MinParticipants > 0 && n < c.MinParticipants {
				d.ps.errorf("config-invalid", d.span(v), "Make max_participants at least min_participants.",
					"config.max_participants (%d) is less than config.min_participants (%d)", n, c.MinParticipants)
			} else if n < 2 {
				d.ps.errorf("config-invalid", d.span(v), "Use at least 2.", "config.max_participants must be at least 2, not %d", n)
			} else {
				c.MaxParticipants = n
			}
		}
	}
	c.DurationMinutes = cfg.intIn("duration_minutes", 1, 7*24*60, 0, true)
	if v := cfg.get("shared_grade"); v != nil {
		if b, ok := d.boolean(v, cfg.field("shared_grade")); ok && !b {
			// A session takes one grade, which every participant shares;
			// accepting false would promise grades nobody gives.
			d.ps.errorf("config-invalid", d.span(v), "Remove shared_grade (it defaults to true), or run one session per agent with proctor_handler.",
				"config.shared_grade: false is not supported: a live session's proctor gives one grade that every participant shares")
		}
	}
	c.Problem = cfg.optStr("problem")
	if v := cfg.get("allow_unclaimed"); v != nil {
		c.AllowUnclaimed, _ = d.boolean(v, cfg.field("allow_unclaimed"))
	}
	out.Collaboration = c
	out.Proctoring = decodeProctoring(d, cfg)
}

func decodeBenchmark(d *decoder, cfg *object, _ *yaml.Node, out *Config, at Span) {
	if !requireConfig(d, cfg, at, "questions and passing_score") {
		return
	}
	c := &BenchmarkConfig{}
	seen := map[string]int{}
	for _, q := range cfg.items("questions", []string{"id", "prompt", "choices", "answer", "answer_sealed", "points", "rubric"}) {
		var qq Question
		id, idNode := q.reqStr("id")
		if idNode != nil {
			if prev, dup := seen[id]; dup {
				d.ps.errorf("config-invalid", d.span(idNode), "Give every question its own id.",
					"question id %q is used twice (first at line %d)", id, prev)
			}
			seen[id] = d.span(idNode).Line
		}
		qq.ID = id
		qq.Prompt, _ = q.reqStr("prompt")
		qq.Points = q.numberIn("points", 0, math.MaxFloat64, 0, true, true)
		qq.Rubric = q.optStr("rubric")
		if v := q.get("choices"); v != nil {
			qq.Choices = q.strings("choices", true)
			if len(qq.Choices) == 1 {
				d.ps.errorf("config-invalid", d.span(v), "Give at least two choices, or remove choices for a free-response question.",
					"%s has only one choice", q.field("choices"))
			}
			if dup := firstDuplicate(qq.Choices); dup != "" {
				d.ps.errorf("config-invalid", d.span(v), "Make every choice different.", "%s lists %q twice", q.field("choices"), dup)
			}
		}
		decodeAnswer(d, q, &qq)
		c.Questions = append(c.Questions, qq)
	}
	c.PassingScore = cfg.numberIn("passing_score", 0, 100, 0, false, true)
	c.TimeLimitMinutes = cfg.intIn("time_limit_minutes", 1, 24*60, DefaultBenchmarkTimeLimitMins, false)
	if len(c.Questions) > 0 {
		c.Sample = cfg.intIn("sample", 1, len(c.Questions), 0, false)
	}
	out.Benchmark = c
	out.Proctoring = decodeProctoring(d, cfg)
}

// decodeAnswer reads a question's answer: in the clear (`answer`) or
// sealed to the registry's key (`answer_sealed`), never both. A
// multiple-choice question needs one, and a plain one must be a choice;
// whether a sealed one is a choice only the registry's key can tell
// (Options.Key).
func decodeAnswer(d *decoder, q *object, qq *Question) {
	plain, sealed := q.get("answer"), q.get("answer_sealed")
	switch {
	case plain != nil && sealed != nil:
		d.ps.errorf("config-invalid", d.span(sealed), "Keep answer_sealed and remove answer: the plain answer gives the sealed one away.",
			"%s has both answer and answer_sealed", describe(q.path))
		return
	case sealed != nil:
		d.mark(answerField(qq.ID), sealed)
		if s, ok := d.str(sealed, q.field("answer_sealed")); ok {
			if err := seal.Check(s); err != nil {
				d.ps.errorf("config-invalid", d.span(sealed), "Seal the answer with `sip seal`, which writes the armored block.",
					"%s: %v", q.field("answer_sealed"), err)
				return
			}
			qq.Sealed = s
		}
	case qq.MultipleChoice():
		a := q.get("answer")
		if a == nil {
			d.ps.errorf("config-invalid", d.span(q.node), "Add `answer_sealed:` (`sip seal` writes it) or `answer:` with the correct choice.",
				"%s is required for a multiple-choice question", q.field("answer"))
			return
		}
		d.mark(answerField(qq.ID), a)
		if ans, ok := d.str(a, q.field("answer")); ok {
			if !contains(qq.Choices, ans) {
				d.ps.errorf("config-invalid", d.span(a), "Copy the correct choice exactly into answer.",
					"%s %q is not one of the choices", q.field("answer"), ans)
			}
			qq.Answer = ans
		}
	case plain != nil:
		d.mark(answerField(qq.ID), plain)
		qq.Answer = q.optStr("answer")
	}
}

// mark records where the value of a field is, for the rules that point
// at it later.
func (d *decoder) mark(field string, n *yaml.Node) {
	if d.spans != nil {
		d.spans[field] = d.span(n)
	}
}

func decodeCertification(d *decoder, cfg *object, _ *yaml.Node, out *Config, at Span) {
	if !requireConfig(d, cfg, at, "prompts, rubric and passing_score") {
		return
	}
	c := &CertificationConfig{}
	promptAt := map[string]Span{}
	var promptOrder []string
	for _, p := range cfg.items("prompts", []string{"id", "category", "description", "messages", "should"}) {
		var pp Prompt
		id, idNode := p.reqStr("id")
		if idNode != nil {
			if prev, dup := promptAt[id]; dup {
				d.ps.errorf("config-invalid", d.span(idNode), "Give every prompt its own id.",
					"prompt id %q is used twice (first at line %d)", id, prev.Line)
			} else {
				promptAt[id] = d.span(idNode)
				promptOrder = append(promptOrder, id)
			}
		}
		pp.ID = id
		pp.Category, _ = p.reqStr("category")
		pp.Description, _ = p.reqStr("description")
		msgs := p.items("messages", []string{"role", "content"})
		for i, m := range msgs {
			var mm Message
			role, roleNode := m.reqStr("role")
			if roleNode != nil && !contains(messageRoles, role) {
				d.ps.errorf("config-invalid", d.span(roleNode), "Use system, user or assistant.",
					"%s %q is not one of system, user, assistant", m.field("role"), role)
			}
			mm.Role = role
			mm.Content, _ = m.reqStr("content")
			pp.Messages = append(pp.Messages, mm)
			if i == len(msgs)-1 && roleNode != nil && role != "user" {
				d.ps.errorf("config-invalid", d.span(roleNode), "End the conversation with the user's turn the agent must answer.",
					"the last message of %s is from %q, not from the user", p.path, role)
			}
		}
		pp.Should = p.strings("should", true)
		c.Prompts = append(c.Prompts, pp)
	}

	rubricNode := cfg.get("rubric")
	covered := map[string]bool{}
	total := 0.0
	for _, r := range cfg.items("rubric", []string{"prompt_id", "criteria", "weight", "max_score"}) {
		var row RubricRow
		pid, pidNode := r.reqStr("prompt_id")
		if pidNode != nil {
			switch _, ok := promptAt[pid]; {
			case !ok:
				hint := "Point the row at one of the prompt ids."
				if s := suggest(pid, promptOrder); s != "" {
					hint = "Did you mean " + s + "?"
				}
				d.ps.errorf("config-invalid", d.span(pidNode), hint, "rubric row for prompt %q, which does not exist", pid)
			case covered[pid]:
				d.ps.errorf("config-invalid", d.span(pidNode), "Keep one rubric row per prompt.", "prompt %q has more than one rubric row", pid)
			}
			covered[pid] = true
		}
		row.PromptID = pid
		row.Criteria, _ = r.reqStr("criteria")
		row.Weight = r.numberIn("weight", 0, math.MaxFloat64, 1, true, false)
		row.MaxScore = r.numberIn("max_score", 0, math.MaxFloat64, 0, true, true)
		total += row.MaxScore
		c.Rubric = append(c.Rubric, row)
	}
	for _, id := range promptOrder {
		if rubricNode != nil && !covered[id] {
			d.ps.errorf("config-invalid", promptAt[id], "Add a rubric row with prompt_id: "+id+".", "prompt %q has no rubric row", id)
		}
	}
	if rubricNode != nil && len(c.Rubric) > 0 && math.Abs(total-100) > 1e-9 {
		d.ps.errorf("config-invalid", cfg.keySpan("rubric"), "Adjust the max_score values so they add up to 100.",
			"rubric max_score values sum to %s, not 100", fmtNum(math.Round(total*1e6)/1e6))
	}
	c.PassingScore = cfg.numberIn("passing_score", 0, 100, 0, false, true)
	c.NonceValidityMinutes = cfg.intIn("nonce_validity_minutes", 1, 24*60, DefaultNonceValidityMinutes, false)
	out.Certification = c
}

func firstDuplicate(list []string) string {
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		if seen[s] {
			return s
		}
		seen[s] = true
	}
	return ""
}
