package api

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// The part of an OpenAPI 3.0 document the reference at /docs/api reads,
// decoded with yaml.v3 and its local references ("#/components/…")
// resolved. The document itself is checked by the tests (every response
// against it, Redocly's lint); a full OpenAPI library here would cost
// every sip command its package initialisation (JSON-schema meta-schemas
// compiled before main), for one page.

type oaDoc struct {
	Info struct {
		Title       string
		Description string
	}
	Tags []struct {
		Name        string
		Description string
	}
	Security   []map[string][]string
	Paths      map[string]*oaPathItem
	Components struct {
		Schemas       map[string]*oaRef[oaSchema]
		Responses     map[string]*oaRef[oaResponse]
		Parameters    map[string]*oaRef[oaParameter]
		RequestBodies map[string]*oaRef[oaRequestBody] `yaml:"requestBodies"`
	}
}

type oaPathItem struct {
	Parameters                    []*oaRef[oaParameter]
	Get, Post, Put, Patch, Delete *oaOperation
}

// operation is the path's operation for an HTTP method, or nil.
func (p *oaPathItem) operation(method string) *oaOperation {
	switch method {
	case "GET":
		return p.Get
	case "POST":
		return p.Post
	case "PUT":
		return p.Put
	case "PATCH":
		return p.Patch
	case "DELETE":
		return p.Delete
	}
	return nil
}

type oaOperation struct {
	OperationID string `yaml:"operationId"`
	Summary     string
	Description string
	Tags        []string
	// Security is nil when the operation does not say (the document's
	// applies), empty when it needs none.
	Security    *[]map[string][]string
	Parameters  []*oaRef[oaParameter]
	RequestBody *oaRef[oaRequestBody] `yaml:"requestBody"`
	Responses   map[string]*oaRef[oaResponse]
}

type oaParameter struct {
	Name        string
	In          string
	Description string
	Required    bool
	Schema      *oaRef[oaSchema]
}

type oaRequestBody struct {
	Description string
	Content     map[string]*oaMediaType
}

type oaResponse struct {
	Description string
	Content     map[string]*oaMediaType
}

type oaMediaType struct {
	Schema   *oaRef[oaSchema]
	Example  any
	Examples map[string]*struct {
		Summary string
		Value   any
	}
}

type oaSchema struct {
	Type        string
	Format      string
	Title       string
	Description string
	Properties  map[string]*oaRef[oaSchema]
	Required    []string
	Enum        []any
	Items       *oaRef[oaSchema]
	AllOf       []*oaRef[oaSchema] `yaml:"allOf"`
	OneOf       []*oaRef[oaSchema] `yaml:"oneOf"`
	Nullable    bool
	Example     any
}

// oaRef is a reference ($ref) or the object itself; once resolved, Value
// is the object either way.
type oaRef[T any] struct {
	Ref   string
	Value *T
}

func (r *oaRef[T]) UnmarshalYAML(n *yaml.Node) error {
	var ref struct {
		Ref string `yaml:"$ref"`
	}
	if err := n.Decode(&ref); err != nil {
		return err
	}
	if ref.Ref != "" {
		r.Ref = ref.Ref
		return nil
	}
	r.Value = new(T)
	return n.Decode(r.Value)
}

// resolve points r at the component it names, following references to
// references.
func resolve[T any](r *oaRef[T], components map[string]*oaRef[T]) error {
	seen := map[string]bool{}
	for at := r; at.Value == nil; {
		name, ok := strings.CutPrefix(at.Ref, "#/components/")
		_, name, _ = strings.Cut(name, "/")
		next := components[name]
		if !ok || next == nil || seen[name] {
			return fmt.Errorf("openapi: unresolvable reference %q", r.Ref)
		}
		seen[name] = true
		if next.Value != nil {
			r.Value = next.Value
			return nil
		}
		at = next
	}
	return nil
}

// parseOpenAPI decodes a document and resolves its references.
func parseOpenAPI(data []byte) (*oaDoc, error) {
	var doc oaDoc
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	c := &doc.Components
	seen := map[*oaSchema]bool{}
	var schema func(r *oaRef[oaSchema]) error
	schema = func(r *oaRef[oaSchema]) error {
		if r == nil {
			return nil
		}
		if err := resolve(r, c.Schemas); err != nil {
			return err
		}
		s := r.Value
		if seen[s] {
			return nil
		}
		seen[s] = true
		for _, p := range s.Properties {
			if err := schema(p); err != nil {
				return err
			}
		}
		for _, p := range append(append([]*oaRef[oaSchema]{s.Items}, s.AllOf...), s.OneOf...) {
			if err := schema(p); err != nil {
				return err
			}
		}
		return nil
	}
	content := func(m map[string]*oaMediaType) error {
		for _, mt := range m {
			if err := schema(mt.Schema); err != nil {
				return err
			}
		}
		return nil
	}
	parameters := func(ps []*oaRef[oaParameter]) error {
		for _, p := range ps {
			if err := resolve(p, c.Parameters); err != nil {
				return err
			}
			if err := schema(p.Value.Schema); err != nil {
				return err
			}
		}
		return nil
	}
	for _, item := range doc.Paths {
		if err := parameters(item.Parameters); err != nil {
			return nil, err
		}
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			op := item.operation(m)
			if op == nil {
				continue
			}
			if err := parameters(op.Parameters); err != nil {
				return nil, err
			}
			if rb := op.RequestBody; rb != nil {
				if err := resolve(rb, c.RequestBodies); err != nil {
					return nil, err
				}
				if err := content(rb.Value.Content); err != nil {
					return nil, err
				}
			}
			for _, r := range op.Responses {
				if err := resolve(r, c.Responses); err != nil {
					return nil, err
				}
				if err := content(r.Value.Content); err != nil {
					return nil, err
				}
			}
		}
	}
	return &doc, nil
}
