package api

import (
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
	"gopkg.in/yaml.v3"
)

// The API reference at /docs/api is rendered on the server from the one
// OpenAPI document the API is tested against: no script, no CDN, the
// site's stylesheet. Every operation shows its parameters, its request
// and response shapes (one per kind where the document has a oneOf), an
// example of each (the document's own, or one built from the schema),
// and its errors.

type docTag struct {
	Name, Description string
	Ops               []docOp
}

type docOp struct {
	ID, Method, Path, Summary string
	Description               template.HTML
	Public                    bool
	Params                    []docField
	Request                   []docShape
	RequestNote               template.HTML
	Responses                 []docResponse
}

type docResponse struct {
	Status, Description string
	Error               bool
	Shapes              []docShape
}

// docShape is one schema of a body: its fields and an example.
type docShape struct {
	Title       string
	Description string
	Fields      []docField
	Examples    []docExample
}

type docExample struct {
	Summary, JSON string
}

type docField struct {
	Name, Type, Description string
	Required                bool
	Depth                   int
}

type apiDocs struct {
	Title       string
	Description template.HTML
	Tags        []docTag
}

var (
	docsOnce sync.Once
	docsData *apiDocs
	docsErr  error
)

// reference builds the reference from the document, once.
func (s *Server) reference() (*apiDocs, error) {
	docsOnce.Do(func() {
		doc, err := parseOpenAPI(openAPIYAML)
		if err != nil {
			docsErr = err
			return
		}
		docsData = buildDocs(doc, s.markdown)
	})
	return docsData, docsErr
}

func buildDocs(doc *oaDoc, md *markdown) *apiDocs {
	out := &apiDocs{Title: doc.Info.Title, Description: md.render("", doc.Info.Description)}
	byTag := map[string]*docTag{}
	var order []string
	for _, t := range doc.Tags {
		byTag[t.Name] = &docTag{Name: t.Name, Description: t.Description}
		order = append(order, t.Name)
	}
	paths := documentOrder(doc)
	for _, p := range paths {
		item := doc.Paths[p]
		for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			op := item.operation(method)
			if op == nil {
				continue
			}
			d := docOp{ID: op.OperationID, Method: method, Path: p, Summary: op.Summary, Description: md.render("", op.Description)}
			d.Public = op.Security != nil && len(*op.Security) == 0 || op.Security == nil && len(doc.Security) == 0
			for _, pr := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if pr.Value == nil {
					continue
				}
				f := docField{Name: pr.Value.Name + " (" + pr.Value.In + ")", Description: pr.Value.Description, Required: pr.Value.Required}
				if pr.Value.Schema != nil {
					f.Type = typeName(pr.Value.Schema)
				}
				d.Params = append(d.Params, f)
			}
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				d.RequestNote = md.render("", rb.Value.Description)
				if mt := rb.Value.Content["application/json"]; mt != nil {
					d.Request = shapes(mt)
				}
			}
			codes := make([]string, 0, len(op.Responses))
			for code := range op.Responses {
				codes = append(codes, code)
			}
			sort.Strings(codes) // 2xx, 4xx, 5xx, then default
			for _, code := range codes {
				r := op.Responses[code]
				if r == nil || r.Value == nil {
					continue
				}
				dr := docResponse{Status: code, Error: !strings.HasPrefix(code, "2") && !strings.HasPrefix(code, "3"), Description: r.Value.Description}
				if mt := r.Value.Content["application/json"]; mt != nil && !dr.Error {
					dr.Shapes = shapes(mt)
				} else if !dr.Error {
					dr.Shapes = textShapes(r.Value.Content)
				}
				d.Responses = append(d.Responses, dr)
			}
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			if byTag[tag] == nil {
				byTag[tag] = &docTag{Name: tag}
				order = append(order, tag)
			}
			byTag[tag].Ops = append(byTag[tag].Ops, d)
		}
	}
	for _, name := range order {
		if t := byTag[name]; len(t.Ops) > 0 {
			out.Tags = append(out.Tags, *t)
		}
	}
	return out
}

// documentOrder lists the document's paths in the order it gives them
// (its authors group and order them for readers; a map loses that).
func documentOrder(doc *oaDoc) []string {
	var root yaml.Node
	var out []string
	seen := map[string]bool{}
	if yaml.Unmarshal(openAPIYAML, &root) == nil && len(root.Content) == 1 {
		top := root.Content[0]
		for i := 0; i+1 < len(top.Content); i += 2 {
			if top.Content[i].Value != "paths" {
				continue
			}
			paths := top.Content[i+1]
			for j := 0; j+1 < len(paths.Content); j += 2 {
				if p := paths.Content[j].Value; doc.Paths[p] != nil {
					out = append(out, p)
					seen[p] = true
				}
			}
		}
	}
	rest := make([]string, 0, len(doc.Paths))
	for p := range doc.Paths {
		rest = append(rest, p)
	}
	sort.Strings(rest)
	for _, p := range rest {
		if !seen[p] {
			out = append(out, p)
		}
	}
	return out
}

// shapes are a body's schemas: each alternative of a oneOf, or the one.
func shapes(mt *oaMediaType) []docShape {
	if mt.Schema == nil || mt.Schema.Value == nil {
		return nil
	}
	schema := mt.Schema.Value
	alts := []*oaRef[oaSchema]{mt.Schema}
	if len(schema.OneOf) > 0 {
		alts = schema.OneOf
	}
	var out []docShape
	for _, alt := range alts {
		v := alt.Value
		sh := docShape{Title: v.Title, Description: v.Description}
		if sh.Title == "" && alt.Ref != "" {
			sh.Title = alt.Ref[strings.LastIndex(alt.Ref, "/")+1:]
		}
		if len(alts) == 1 {
			sh.Title, sh.Description = "", schema.Description
		}
		sh.Fields = fields(v, "", 0)
		sh.Examples = examplesOf(mt, v, len(alts) > 1)
		out = append(out, sh)
	}
	return out
}

// textShapes are the examples of a body that is not JSON (metrics, an
// event stream), under its media type.
func textShapes(content map[string]*oaMediaType) []docShape {
	types := make([]string, 0, len(content))
	for t := range content {
		types = append(types, t)
	}
	sort.Strings(types)
	var out []docShape
	for _, t := range types {
		if ex, ok := content[t].Example.(string); ok {
			out = append(out, docShape{Title: t, Examples: []docExample{{JSON: ex}}})
		}
	}
	return out
}

// examplesOf is the document's examples of a body (for one alternative
// of several, only its own), or one built from the schema.
func examplesOf(mt *oaMediaType, v *oaSchema, alternative bool) []docExample {
	var out []docExample
	if !alternative {
		if mt.Example != nil {
			out = append(out, docExample{JSON: pretty(mt.Example)})
		}
		names := make([]string, 0, len(mt.Examples))
		for n := range mt.Examples {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if ex := mt.Examples[n]; ex != nil {
				out = append(out, docExample{Summary: ex.Summary, JSON: pretty(ex.Value)})
			}
		}
	}
	if len(out) == 0 {
		out = append(out, docExample{JSON: pretty(sample(v, 0))})
	}
	return out
}

func pretty(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// maxDocDepth bounds how deep fields and samples follow nested schemas.
const maxDocDepth = 4

// fields lists a schema's properties, nested ones indented under theirs.
func fields(s *oaSchema, prefix string, depth int) []docField {
	if s == nil || depth > maxDocDepth {
		return nil
	}
	props := map[string]*oaRef[oaSchema]{}
	required := map[string]bool{}
	for _, part := range append([]*oaRef[oaSchema]{{Value: s}}, s.AllOf...) {
		if part.Value == nil {
			continue
		}
		for n, p := range part.Value.Properties {
			props[n] = p
		}
		for _, r := range part.Value.Required {
			required[r] = true
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { // required first, then by name
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	var out []docField
	for _, n := range names {
		p := props[n].Value
		if p == nil {
			continue
		}
		desc := p.Description
		if len(p.Enum) > 0 && len(p.Enum) > 1 {
			vals := make([]string, len(p.Enum))
			for i, e := range p.Enum {
				vals[i] = fmt.Sprint(e)
			}
			desc = strings.TrimSpace(desc + " One of: " + strings.Join(vals, ", ") + ".")
		}
		out = append(out, docField{Name: prefix + n, Type: typeName(props[n]), Description: desc, Required: required[n], Depth: depth})
		inner := p
		if p.Type == "array" && p.Items != nil {
			inner = p.Items.Value
		}
		if inner != nil && (inner.Type == "object" || len(inner.AllOf) > 0) && len(inner.Properties)+len(inner.AllOf) > 0 {
			out = append(out, fields(inner, prefix+n+map[bool]string{true: "[].", false: "."}[inner != p], depth+1)...)
		}
	}
	return out
}

// typeName names a schema's type for a table: string, array of object, …
func typeName(r *oaRef[oaSchema]) string {
	if r == nil || r.Value == nil {
		return ""
	}
	v := r.Value
	name := ""
	switch {
	case v.Type != "":
		name = v.Type
	case len(v.AllOf) > 0:
		return typeName(v.AllOf[0]) + nullable(v)
	case len(v.OneOf) > 0:
		return "one of several"
	}
	if name == "array" && v.Items != nil {
		name = "array of " + typeName(v.Items)
	}
	if v.Format != "" {
		name += " (" + v.Format + ")"
	}
	if r.Ref != "" && name == "object" {
		name = r.Ref[strings.LastIndex(r.Ref, "/")+1:]
	}
	return name + nullable(v)
}

func nullable(v *oaSchema) string {
	if v.Nullable {
		return " or null"
	}
	return ""
}

// sample builds an example value from a schema.
func sample(s *oaSchema, depth int) any {
	if s == nil || depth > maxDocDepth {
		return nil
	}
	if s.Example != nil {
		return s.Example
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if len(s.OneOf) > 0 && s.OneOf[0].Value != nil {
		return sample(s.OneOf[0].Value, depth+1)
	}
	if len(s.AllOf) > 0 {
		merged := map[string]any{}
		for _, part := range s.AllOf {
			if m, ok := sample(part.Value, depth+1).(map[string]any); ok {
				for k, v := range m {
					merged[k] = v
				}
			}
		}
		for k, p := range s.Properties {
			merged[k] = sample(p.Value, depth+1)
		}
		return merged
	}
	switch {
	case s.Type == "object":
		m := map[string]any{}
		for k, p := range s.Properties {
			m[k] = sample(p.Value, depth+1)
		}
		return m
	case s.Type == "array":
		if s.Items == nil {
			return []any{}
		}
		return []any{sample(s.Items.Value, depth+1)}
	case s.Type == "integer":
		return 1
	case s.Type == "number":
		return 1.5
	case s.Type == "boolean":
		return true
	case s.Type == "string":
		switch s.Format {
		case "date-time":
			return "2026-11-24T12:00:00Z"
		case "uri":
			return "https://sip.example.org/…"
		}
		return "string"
	}
	return nil
}

type docsPage struct {
	pageBase
	D       *apiDocs
	BaseURL string
}

// apiReference serves /docs/api.
func (s *Server) apiReference(c echo.Context) error {
	return s.docsPage(c, "/docs/api", func() (string, any, error) {
		d, err := s.reference()
		return "docs_api", docsPage{pageBase: pageBase{Title: "API reference", Nav: "docs", Version: s.version}, D: d}, err
	})
}

// docsPage serves a page that depends only on the binary: rendered once
// per snapshot (the page cache lives there) and answered 304 when the
// browser has it; the reference is 270 KB, not worth rendering per view.
func (s *Server) docsPage(c echo.Context, key string, build func() (string, any, error)) error {
	snap, err := s.catalog.current(c.Request().Context())
	if err != nil {
		return err
	}
	return s.cachedPage(c, snap, key, "", build)
}

// quickstart serves /docs/quickstart: an agent's first evaluation, end
// to end, with the commands to run.
func (s *Server) quickstart(c echo.Context) error {
	base := s.baseURL
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	return s.docsPage(c, "/docs/quickstart", func() (string, any, error) {
		return "docs_quickstart", docsPage{pageBase: pageBase{Title: "Quickstart for agents", Nav: "docs", Version: s.version}, BaseURL: base}, nil
	})
}
