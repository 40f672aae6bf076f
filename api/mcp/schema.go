package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
)

// document is the part of the OpenAPI document the tools are built from.
type document struct {
	Info struct {
		Title       string `json:"title"`
		Version     string `json:"version"`
		Description string `json:"description"`
	} `json:"info"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas       map[string]any       `json:"schemas"`
		Parameters    map[string]parameter `json:"parameters"`
		RequestBodies map[string]body      `json:"requestBodies"`
		Responses     map[string]body      `json:"responses"`
	} `json:"components"`
}

type parameter struct {
	Ref         string `json:"$ref"`
	Name        string `json:"name"`
	In          string `json:"in"`
	Required    bool   `json:"required"`
	Description string `json:"description"`
	Schema      any    `json:"schema"`
}

type body struct {
	Ref         string `json:"$ref"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Content     map[string]struct {
		Schema any `json:"schema"`
	} `json:"content"`
}

// operation is one operation of the document, with its path and method
// and everything a tool needs of it, references resolved.
type operation struct {
	ID, Method, Path     string
	Summary, Description string
	Public               bool // the document says it needs no key
	Params               []parameter
	Body                 any   // the request body's JSON Schema; nil when it takes none
	Responses            []any // the JSON Schemas of its 2xx JSON responses, distinct
}

func parseDocument(raw []byte) (*document, error) {
	var d document
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("reading the OpenAPI document: %w", err)
	}
	return &d, nil
}

// operations indexes the document's operations by operationId.
func (d *document) operations() (map[string]*operation, error) {
	ops := map[string]*operation{}
	for path, item := range d.Paths {
		var shared []parameter
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, fmt.Errorf("%s: parameters: %w", path, err)
			}
		}
		for method, raw := range item {
			if method == "parameters" || method == "summary" || method == "description" {
				continue
			}
			var o struct {
				OperationID string              `json:"operationId"`
				Summary     string              `json:"summary"`
				Description string              `json:"description"`
				Parameters  []parameter         `json:"parameters"`
				RequestBody *body               `json:"requestBody"`
				Responses   map[string]body     `json:"responses"`
				Security    *[]map[string][]any `json:"security"`
			}
			if err := json.Unmarshal(raw, &o); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			op := &operation{ID: o.OperationID, Method: strings.ToUpper(method), Path: path,
				Summary: o.Summary, Description: strings.TrimSpace(o.Description),
				Public: o.Security != nil && len(*o.Security) == 0}
			for _, p := range append(append([]parameter{}, shared...), o.Parameters...) {
				if p.Ref != "" {
					p = d.Components.Parameters[strings.TrimPrefix(p.Ref, "#/components/parameters/")]
				}
				if p.In == "path" || p.In == "query" {
					p.Schema = d.jsonSchema(p.Schema, nil)
					op.Params = append(op.Params, p)
				}
			}
			if b := o.RequestBody; b != nil {
				if b.Ref != "" {
					*b = d.Components.RequestBodies[strings.TrimPrefix(b.Ref, "#/components/requestBodies/")]
				}
				if c, ok := b.Content["application/json"]; ok && !isNone(c.Schema) {
					op.Body = d.jsonSchema(c.Schema, nil)
				}
			}
			for code, r := range o.Responses {
				if !strings.HasPrefix(code, "2") {
					continue
				}
				if r.Ref != "" {
					r = d.Components.Responses[strings.TrimPrefix(r.Ref, "#/components/responses/")]
				}
				c, ok := r.Content["application/json"]
				if !ok {
					for _, v := range r.Content { // application/ld+json and the like
						c, ok = v, true
					}
				}
				if !ok {
					continue
				}
				s := d.jsonSchema(c.Schema, nil)
				if !containsSchema(op.Responses, s) {
					op.Responses = append(op.Responses, s)
				}
			}
			if op.ID != "" {
				ops[op.ID] = op
			}
		}
	}
	return ops, nil
}

// isNone reports whether a body schema admits only the empty object.
func isNone(s any) bool {
	m, ok := s.(map[string]any)
	return ok && m["maxProperties"] == float64(0)
}

func containsSchema(list []any, s any) bool {
	b, _ := json.Marshal(s)
	for _, x := range list {
		if c, _ := json.Marshal(x); string(c) == string(b) {
			return true
		}
	}
	return false
}

// openAPIOnly are the keywords of OpenAPI 3.0 schemas that JSON Schema
// does not have (or that clients' validators refuse in strict mode).
var openAPIOnly = map[string]bool{"example": true, "discriminator": true, "xml": true, "externalDocs": true, "nullable": true}

// jsonSchema turns an OpenAPI 3.0 schema into a self-contained JSON
// Schema (2020-12): references inlined, `nullable` as a union with null,
// OpenAPI's own keywords dropped. seen guards against a schema that
// refers to itself (the document has none; a loop becomes {}).
func (d *document) jsonSchema(s any, seen map[string]bool) any {
	switch v := s.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if seen[name] {
				return map[string]any{}
			}
			next := map[string]bool{name: true}
			for k := range seen {
				next[k] = true
			}
			return d.jsonSchema(d.Components.Schemas[name], next)
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			if openAPIOnly[k] {
				continue
			}
			switch k {
			case "properties":
				props := map[string]any{}
				for name, p := range x.(map[string]any) {
					props[name] = d.jsonSchema(p, seen)
				}
				out[k] = props
			case "enum", "required", "default":
				out[k] = x
			default:
				out[k] = d.jsonSchema(x, seen)
			}
		}
		if v["nullable"] == true {
			return map[string]any{"anyOf": []any{out, map[string]any{"type": "null"}}}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = d.jsonSchema(x, seen)
		}
		return out
	}
	return s
}
