package registry

import (
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sipregistry/sip/registry/internal/yaml"
)

// topFields are the frontmatter fields SIP-1 defines, plus the
// accepted alias `title`.
var topFields = []string{
	"sip", "id", "name", "title", "module", "type", "status", "prerequisites", "author",
	"created_at", "updated_at", "version", "points", "adapted-from", "config", "executable",
}

var (
	semverRE = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
)

// MaxIDLength is the longest id a SIP may have.
const MaxIDLength = 64

// decodeSIP reads the top-level map of a frontmatter into a SIP.
func (d *decoder) decodeSIP(rootNode *yaml.Node, doc *Document) *SIP {
	if !d.measure(rootNode, 0) {
		return nil
	}
	d.budget = MaxNodes // measuring spent it; decoding visits the same nodes
	rootNode = d.resolve(rootNode)
	if rootNode == nil {
		return nil
	}
	o, ok := d.object(rootNode, root, 0)
	if !ok {
		return nil
	}
	o.unknown(topFields, SeverityError)
	s := &SIP{Prerequisites: []string{}}
	start := doc.Span("")
	for i, k := range o.keys {
		doc.spans[k.Value] = d.span(o.vals[i])
	}

	required := func(key string) *yaml.Node {
		v := o.get(key)
		if v == nil {
			d.ps.errorf("field-required", start, "Add `"+key+":` to the frontmatter.", "required field %q is missing", key)
		}
		return v
	}
	reqString := func(key string) (string, *yaml.Node) {
		v := required(key)
		if v == nil {
			return "", nil
		}
		str, ok := d.str(v, top(key))
		if ok && strings.TrimSpace(str) == "" {
			d.ps.errorf("field-required", d.span(v), "Give "+key+" a value.", "%s is empty", key)
			return "", nil
		}
		return str, v
	}

	if v := required("sip"); v != nil {
		if n, ok := d.integer(v, top("sip")); ok {
			if n <= 0 {
				d.ps.errorf("field-type", d.span(v), "SIP numbers start at 1.", "sip must be an integer greater than 0, not %d", n)
			} else {
				s.Number = n
			}
		}
	}

	if id, v := reqString("id"); v != nil {
		if len(id) > MaxIDLength || !isSlug(id, false) {
			hint := "Use lower-case words joined by hyphens"
			if k := kebab(id); k != "" && len(k) <= MaxIDLength {
				hint += ", e.g. `" + k + "`"
			}
			d.ps.errorf("id-format", d.span(v), hint+".", "id %q is not kebab-case of at most %d characters", id, MaxIDLength)
		} else {
			s.ID = id
		}
	}

	nameNode, titleNode := o.get("name"), o.get("title")
	switch {
	case nameNode != nil && titleNode != nil:
		d.ps.errorf("field-conflict", d.span(titleNode), "Remove `title`.", "both name and title are given; title is an alias of name")
		s.Name, _ = reqString("name")
	case titleNode != nil:
		d.ps.warnf("field-alias", d.span(titleNode), "Rename `title:` to `name:`.", "title is a deprecated alias of name")
		if str, ok := d.str(titleNode, top("title")); ok && strings.TrimSpace(str) != "" {
			s.Name = str
			doc.spans["name"] = d.span(titleNode)
		} else if ok {
			d.ps.errorf("field-required", d.span(titleNode), "Give the SIP a name.", "title is empty")
		}
	default:
		s.Name, _ = reqString("name")
	}

	if m, v := reqString("module"); v != nil {
		if !isSlug(m, true) || len(m) > MaxIDLength {
			d.ps.errorf("id-format", d.span(v), "Use lower-case words joined by hyphens or underscores, e.g. `safety`.",
				"module %q is not a slug", m)
		} else {
			s.Module = m
		}
	}

	if t, v := reqString("type"); v != nil {
		if contains(typeNames(), t) {
			s.Type = Type(t)
		} else {
			d.enumError(v, "type", t, typeNames())
		}
	}
	if st, v := reqString("status"); v != nil {
		if contains(statusNames(), st) {
			s.Status = Status(st)
		} else {
			d.enumError(v, "status", st, statusNames())
		}
	}

	if v := o.get("prerequisites"); v != nil {
		if items, ok := d.list(v, top("prerequisites"), 1); ok {
			for i, item := range items {
				if item.Kind == yaml.MappingNode {
					if c, ok := d.credentialPrerequisite(item, top("prerequisites").item(i)); ok {
						s.CredentialPrerequisites = append(s.CredentialPrerequisites, c)
						doc.credAt = append(doc.credAt, d.span(item))
					}
					continue
				}
				str, ok := d.str(item, top("prerequisites").item(i))
				if !ok {
					continue
				}
				s.Prerequisites = append(s.Prerequisites, strings.TrimSpace(str))
				doc.prereqAt = append(doc.prereqAt, d.span(item))
			}
		}
	}

	s.Author, _ = reqString("author")
	s.CreatedAt = d.date(required("created_at"), "created_at")
	s.UpdatedAt = d.date(required("updated_at"), "updated_at")
	if !s.CreatedAt.IsZero() && !s.UpdatedAt.IsZero() && s.UpdatedAt.Before(s.CreatedAt) {
		d.ps.errorf("date-order", doc.Span("updated_at"), "Set updated_at on or after created_at.",
			"updated_at (%s) is before created_at (%s)", o.get("updated_at").Value, o.get("created_at").Value)
	}

	if v := required("version"); v != nil {
		switch {
		case v.Kind != yaml.ScalarNode || v.Tag != "!!str":
			d.ps.errorf("version-semver", d.span(v), "Write the version as a quoted string: version: \"1.0.0\".",
				"version must be a MAJOR.MINOR.PATCH string, not %s (%s)", kindName(v), v.Value)
		case !semverRE.MatchString(v.Value):
			d.ps.errorf("version-semver", d.span(v), "Write three numbers, e.g. version: \"1.0.0\".",
				"version %q is not a semantic version MAJOR.MINOR.PATCH", v.Value)
		default:
			s.Version = v.Value
		}
	}

	if v := o.get("points"); v != nil {
		if p, ok := d.number(v, top("points")); ok {
			if p < 0 {
				d.ps.errorf("field-type", d.span(v), "Use 0 or more points.", "points must be a number ≥ 0, not %v", p)
			} else {
				s.Points = p
			}
		}
	}

	if v := o.get("adapted-from"); v != nil {
		if str, ok := d.str(v, top("adapted-from")); ok {
			if u, err := url.Parse(str); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				d.ps.errorf("field-type", d.span(v), "Give the full http(s) URL of the source.", "adapted-from must be a URL, not %q", str)
			} else {
				s.AdaptedFrom = str
			}
		}
	}

	d.decodeExecutable(o, s, doc)
	return s
}

func (d *decoder) enumError(v *yaml.Node, field, got string, allowed []string) {
	hint := "Use one of: " + strings.Join(allowed, ", ") + "."
	msg := field + " " + strconv.Quote(got) + " is not one of " + strings.Join(allowed, ", ")
	if s := suggest(got, allowed); s != "" {
		hint = "Did you mean " + s + "?"
	}
	d.ps.errorf("field-enum", d.span(v), hint, "%s", msg)
}

// date reads an RFC 3339 timestamp or a YYYY-MM-DD date.
func (d *decoder) date(v *yaml.Node, field string) time.Time {
	if v == nil {
		return time.Time{}
	}
	str, ok := d.str(v, top(field))
	if !ok {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC3339, str); err == nil {
		return t.UTC()
	}
	if t, err := time.Parse(time.DateOnly, str); err == nil {
		return t
	}
	d.ps.errorf("date-format", d.span(v), "Write e.g. "+field+": 2026-11-22 or "+field+": 2026-11-22T10:00:00Z.",
		"%s %q is neither an RFC 3339 timestamp nor a YYYY-MM-DD date", field, str)
	return time.Time{}
}

// decodeExecutable reads `executable` and `config`, and checks the handler.
func (d *decoder) decodeExecutable(o *object, s *SIP, doc *Document) {
	var spec *HandlerSpec
	var handlerNode *yaml.Node
	if v := o.get("executable"); v != nil {
		if ex, ok := d.object(v, top("executable"), 1); ok {
			ex.unknown([]string{"handler", "script_path"}, SeverityError)
			if h := ex.get("handler"); h != nil {
				handlerNode = h
				doc.spans["executable.handler"] = d.span(h)
				if name, ok := d.str(h, top("executable.handler")); ok {
					spec = d.lookupHandler(h, name, s)
					if known, _ := LookupHandler(name); known == nil && spec == nil {
						// Check the config as the type's own handler would,
						// so every problem shows up in one pass.
						if names := HandlersFor(s.Type); len(names) == 1 {
							spec, _ = LookupHandler(names[0])
						}
					}
				}
			}
			if p := ex.get("script_path"); p != nil {
				if sp, ok := d.str(p, top("executable.script_path")); ok {
					s.ScriptPath = d.scriptPath(p, sp)
				}
			}
		}
	}
	if handlerNode == nil && s.Type.IsEvaluation() {
		d.ps.errorf("field-required", doc.Span("executable"), "Add `executable:` with `handler:` "+handlerChoices(s.Type)+".",
			"executable.handler is required for %s SIPs", s.Type)
	}

	cfgNode := o.get("config")
	var cfg *object
	if cfgNode != nil {
		if c, ok := d.object(cfgNode, top("config"), 1); ok {
			cfg = c
		}
	}
	if cfg != nil {
		if v := cfg.get("valid_days"); v != nil {
			if n, ok := d.integer(v, top("config.valid_days")); ok {
				if n <= 0 {
					d.ps.errorf("config-invalid", d.span(v), "Use a whole number of days greater than 0, or omit it.", "config.valid_days must be > 0, not %d", n)
				} else {
					s.Config.ValidDays = n
				}
			}
		}
	}
	if cfg != nil {
		s.Config.MaxAttempts = cfg.intIn("max_attempts", 1, 1000, 0, false)
		s.Config.RetryAfterHours = cfg.intIn("retry_after_hours", 0, 24*365, 0, false)
		if v := cfg.get("require_claimed"); v != nil {
			if b, ok := d.boolean(v, top("config.require_claimed")); ok {
				s.Config.RequireClaimed = &b
				d.mark("config.require_claimed", v)
			}
		}
		if v := cfg.get("reveal"); v != nil {
			if r, ok := d.str(v, top("config.reveal")); ok {
				if r != RevealScore && r != RevealPassFail && r != RevealNone {
					d.ps.errorf("config-invalid", d.span(v), "Use score, pass_fail or none.", "config.reveal must be score, pass_fail or none, not %q", r)
				} else {
					s.Config.Reveal = r
					d.mark("config.reveal", v)
				}
			}
		}
	}
	if spec == nil {
		return
	}
	if cfg != nil {
		cfg.renameDeprecated()
		cfg.unknown(append([]string{"valid_days", "max_attempts", "retry_after_hours", "reveal", "require_claimed"}, spec.ConfigKeys...), SeverityWarning)
	}
	if spec.decode != nil {
		spec.decode(d, cfg, cfgNode, &s.Config, doc.Span("config"))
	}
	d.publicAnswers(s, doc)
	d.revealOracle(s, doc)
	d.unclaimedSeats(s, doc)
	d.firstProctors(s, doc)
	d.longestAnswers(s, doc)
}

// firstProctors warns of an active proctored or live SIP that names no
// way to get a first proctor: no proctor by id and no qualification but
// itself, whose pass only a proctor can give.
func (d *decoder) firstProctors(s *SIP, doc *Document) {
	if s.Status != StatusActive || s.Type != TypeProctored && s.Type != TypeLiveClassWork {
		return
	}
	p := s.Config.Proctoring
	if p != nil && (len(p.Proctors) > 0 || p.Qualification != "" && p.Qualification != s.ID) {
		return
	}
	d.ps.warnf("first-proctor-missing", doc.Span("config"),
		"Name the first proctors by agent id (config.proctor.proctors), or qualify proctors by a pass of another evaluation (config.proctor.qualification).",
		"nobody can ever proctor %s: its proctors must hold its own pass, which only a proctor can give, and it names no proctor", s.ID)
}

// longestAnswers warns when the right choice is the longest by far in
// most of a benchmark's multiple-choice questions with an answer in the
// clear (LongestChoiceAnswers): always choosing the longest then passes.
// Sealed answers are checked before sealing.
func (d *decoder) longestAnswers(s *SIP, doc *Document) {
	b := s.Config.Benchmark
	if b == nil {
		return
	}
	if longest, known := LongestChoiceAnswers(b.Questions); known >= 2 && longest*2 > known {
		d.ps.warnf("answer-longest-choice", doc.Span("config"),
			"Reword the choices so that wrong ones are as long and as specific as the right one.",
			"the right choice is the longest by far in %d of %d multiple-choice questions: always choosing the longest passes", longest, known)
	}
}

// LongestChoiceAnswers counts the multiple-choice questions with an
// answer in the clear (known) and those of them whose right choice is the
// longest by far (a fifth longer than every other). The check warns when
// that is most of them.
func LongestChoiceAnswers(qs []Question) (longest, known int) {
	for _, q := range qs {
		if !q.MultipleChoice() || q.Answer == "" {
			continue
		}
		known++
		right, other := utf8.RuneCountInString(q.Answer), 0
		for _, c := range q.Choices {
			if c != q.Answer {
				other = max(other, utf8.RuneCountInString(c))
			}
		}
		if right*5 > other*6 {
			longest++
		}
	}
	return longest, known
}

// publicAnswers warns of answers in the clear in an active benchmark that
// awards points: anyone who reads the file passes. Practice benchmarks
// (draft, or no points) may keep them.
func (d *decoder) publicAnswers(s *SIP, doc *Document) {
	b := s.Config.Benchmark
	if b == nil || s.Status != StatusActive || s.Points <= 0 {
		return
	}
	for _, q := range b.Questions {
		if q.Answer != "" {
			d.ps.warnf("answer-key-public", doc.AnswerSpan(q.ID), "Seal it to the registry's key: `sip seal --recipient age1… FILE` replaces every answer with answer_sealed.",
				"the answer to question %q is public in an active benchmark worth %s points: anyone who reads this file passes", q.ID, fmtNum(s.Points))
		}
	}
}

// lookupHandler resolves a handler name and checks it accepts the type.
func (d *decoder) lookupHandler(at *yaml.Node, name string, s *SIP) *HandlerSpec {
	spec, alias := LookupHandler(name)
	if spec == nil {
		hint := "Registered handlers: " + strings.Join(HandlerNames(), ", ") + "."
		if s.Type.IsEvaluation() {
			hint = "Use " + handlerChoices(s.Type) + "."
		}
		msg := "handler " + strconv.Quote(name) + " is not registered"
		if sug := suggest(name, HandlerNames()); sug != "" {
			msg += " (did you mean " + strconv.Quote(sug) + "?)"
		}
		d.ps.errorf("handler-unknown", d.span(at), hint, "%s", msg)
		return nil
	}
	if alias {
		d.ps.warnf("field-alias", d.span(at), "Write handler: "+spec.Name+".", "handler %q is the SafeMolt name of %q", name, spec.Name)
	}
	s.Handler = spec.Name
	if s.Type == TypeProcess {
		d.ps.errorf("handler-type-mismatch", d.span(at), "Remove `executable` from process SIPs.",
			"process SIPs are documents and run no handler, but %q is given", spec.Name)
		return nil
	}
	if s.Type != "" && !spec.Accepts(s.Type) {
		d.ps.errorf("handler-type-mismatch", d.span(at), "Use "+handlerChoices(s.Type)+", or change the type.",
			"handler %q does not accept type %s (it accepts %s)", spec.Name, s.Type, joinTypes(spec.Types))
		return nil
	}
	return spec
}

// scriptPath checks executable.script_path is a clean relative path.
func (d *decoder) scriptPath(at *yaml.Node, p string) string {
	switch {
	case strings.EqualFold(p, "none") || p == "null":
		d.ps.errorf("script-path-invalid", d.span(at), "Omit script_path when there is no script.",
			"script_path %q names a file called %s; omit the field instead", p, p)
	case p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || (len(p) > 1 && p[1] == ':'):
		d.ps.errorf("script-path-invalid", d.span(at), "Use a path relative to the repository root.",
			"script_path %q is not a relative path", p)
	case p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(path.Clean(p), "../"):
		d.ps.errorf("script-path-invalid", d.span(at), "Point at a file inside the repository, without `..`.",
			"script_path %q leaves the repository", p)
	case path.Clean(p) != p || p == ".":
		d.ps.errorf("script-path-invalid", d.span(at), "Write it as "+path.Clean(p)+".",
			"script_path %q is not a clean path (no `.`, `..` or doubled slashes)", p)
	default:
		return p
	}
	return ""
}

func typeNames() []string {
	out := make([]string, len(Types))
	for i, t := range Types {
		out[i] = string(t)
	}
	return out
}

func statusNames() []string {
	out := make([]string, len(Statuses))
	for i, s := range Statuses {
		out[i] = string(s)
	}
	return out
}

func joinTypes(ts []Type) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return strings.Join(out, ", ")
}

// kebab turns a name into a kebab-case id, or "" when nothing is left.
func kebab(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
	}
	return b.String()
}

// Kebab turns a human name into an id candidate, e.g. "AI Safety!" → "ai-safety".
func Kebab(name string) string {
	k := kebab(name)
	if len(k) > MaxIDLength {
		k = strings.TrimRight(k[:MaxIDLength], "-")
	}
	return k
}

// isSlug reports whether s is lower-case words of letters and digits
// joined by single hyphens (or underscores, with underscore), as
// ^[a-z0-9]+(-[a-z0-9]+)*$ (^[a-z0-9]+([_-][a-z0-9]+)*$) match, without
// running a regular expression for every SIP.
func isSlug(s string, underscore bool) bool {
	word := false // the last character was a letter or digit
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
			word = true
		case word && (c == '-' || underscore && c == '_'):
			word = false
		default:
			return false
		}
	}
	return word
}
