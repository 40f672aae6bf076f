package credential

import (
	"regexp"
	"strings"
	"sync"

	"github.com/piprate/json-gold/ld"
)

// toRDF is the RDF dataset of an expanded JSON-LD document, as json-gold's
// ToRDF makes it, except that whether an IRI is valid is asked once per
// IRI across documents instead of once per document (knownIRIs). A graph
// holding anything besides nodes, IRIs and string literals (lists,
// numbers, booleans, JSON literals) is converted by json-gold itself.
func toRDF(api *ld.JsonLdApi, expanded []any) (*ld.RDFDataset, error) {
	issuer := ld.NewIdentifierIssuer("_:b")
	nodeMap := map[string]any{"@default": map[string]any{}}
	if _, err := api.GenerateNodeMap(expanded, nodeMap, "@default", issuer, "", "", nil); err != nil {
		return nil, err
	}
	ds := ld.NewRDFDataset()
	for name, g := range nodeMap {
		if ld.IsRelativeIri(name) {
			continue
		}
		graph := g.(map[string]any)
		if quads, ok := graphQuads(name, graph); ok {
			ds.Graphs[name] = quads
		} else {
			ds.GraphToRDF(name, graph, issuer, false)
		}
	}
	return ds, nil
}

// graphQuads is GraphToRDF of json-gold (without generalised RDF) for a
// graph of nodes whose values are nodes, IRIs and string literals; ok is
// false for any other graph.
func graphQuads(name string, graph map[string]any) (quads []*ld.Quad, ok bool) {
	for id, n := range graph {
		if ld.IsRelativeIri(id) {
			continue
		}
		node := n.(map[string]any)
		subject := resource(id)
		for property, v := range node {
			values, _ := v.([]any)
			switch {
			case property == "@type":
				property = ld.RDFType
			case ld.IsKeyword(property), strings.HasPrefix(property, "_:"), ld.IsRelativeIri(property):
				continue
			}
			predicate := ld.NewIRI(property)
			for _, item := range values {
				object, ok := rdfObject(item)
				if !ok {
					return nil, false
				}
				if object != nil {
					quads = append(quads, ld.NewQuad(subject, predicate, object, name))
				}
			}
		}
	}
	valid := quads[:0]
	for _, q := range quads {
		if validNode(q.Subject) && validNode(q.Predicate) && validNode(q.Object) && (q.Graph == nil || validNode(q.Graph)) {
			valid = append(valid, q)
		}
	}
	return valid, true
}

// rdfObject is json-gold's objectToRDF for a node reference, an IRI or a
// string value object (nil for a relative IRI, which gives no statement).
func rdfObject(item any) (ld.Node, bool) {
	switch v := item.(type) {
	case string: // a type; json-gold keeps one even when relative
		return resource(v), true
	case map[string]any:
		if value, isValue := v["@value"]; isValue {
			s, isString := value.(string)
			if !isString {
				return nil, false
			}
			for k := range v {
				switch k {
				case "@value", "@type", "@language", "@index":
				default:
					return nil, false
				}
			}
			datatype, hasType := v["@type"]
			lang, hasLang := v["@language"]
			switch {
			case datatype == "@json":
				return nil, false
			case hasLang:
				l, _ := lang.(string)
				if !hasType {
					return ld.NewLiteral(s, ld.RDFLangString, l), true
				}
				t, _ := datatype.(string)
				return ld.NewLiteral(s, t, l), true
			case hasType:
				t, _ := datatype.(string)
				return ld.NewLiteral(s, t, ""), true
			default:
				return ld.NewLiteral(s, ld.XSDString, ""), true
			}
		}
		if _, isList := v["@list"]; isList {
			return nil, false
		}
		id, _ := v["@id"].(string)
		if ld.IsRelativeIri(id) {
			return nil, true
		}
		return resource(id), true
	}
	return nil, false
}

// resource is a blank node or an IRI.
func resource(id string) ld.Node {
	if strings.HasPrefix(id, "_:") {
		return ld.NewBlankNode(id)
	}
	return ld.NewIRI(id)
}

// validLanguage is json-gold's check of a literal's language tag.
var validLanguage = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[a-zA-Z]+(-[a-zA-Z0-9]+)*$") })

// validNode is json-gold's InvalidNode, negated, with IRIs checked once.
func validNode(n ld.Node) bool {
	switch v := n.(type) {
	case ld.IRI:
		return knownIRIs.valid(v.Value)
	case ld.Literal:
		if v.Language != "" && !validLanguage().MatchString(v.Language) {
			return false
		}
		return v.Datatype == "" || knownIRIs.valid(v.Datatype)
	}
	return true
}

// maxKnownIRIs bounds the IRIs whose validity is kept.
const maxKnownIRIs = 8192

// knownIRIs keeps whether each IRI met is valid to json-gold: an http(s)
// IRI must pass its IsURL (a large regular expression), any other is
// valid.
var knownIRIs = iriCache{m: map[string]bool{}}

type iriCache struct {
	mu sync.Mutex
	m  map[string]bool
}

func (c *iriCache) valid(iri string) bool {
	if !strings.HasPrefix(iri, "http://") && !strings.HasPrefix(iri, "https://") {
		return true
	}
	c.mu.Lock()
	ok, seen := c.m[iri]
	c.mu.Unlock()
	if seen {
		return ok
	}
	ok = ld.IsURL(iri)
	c.mu.Lock()
	if len(c.m) >= maxKnownIRIs {
		clear(c.m)
	}
	c.m[iri] = ok
	c.mu.Unlock()
	return ok
}
