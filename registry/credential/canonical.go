package credential

import (
	"fmt"
	"strings"
	"sync"

	"github.com/piprate/json-gold/ld"
)

// canonical is the RDFC-1.0 canonical N-Quads of a JSON-LD document.
//
// Processing the contexts is the larger part of canonicalising a
// credential, and they never change: a document whose @context names only
// the embedded contexts is expanded from an active context processed once
// per list of context URLs. Any other document takes the whole path.
func canonical(doc map[string]any) (string, error) {
	active, ok, err := processedContext(doc["@context"])
	if err != nil {
		return "", err
	}
	if !ok {
		return canonicalFull(doc)
	}
	body := make(map[string]any, len(doc))
	for k, v := range doc {
		if k != "@context" {
			body[k] = v
		}
	}
	api := ld.NewJsonLdApi()
	expanded, err := api.Expand(active, "", body, toRDFOptions(), false, nil)
	if err != nil {
		return "", err
	}
	dataset, err := api.ToRDF(expandedList(expanded), toRDFOptions())
	if err != nil {
		return "", err
	}
	out, err := api.Normalize(dataset, canonicalOptions())
	if err != nil {
		return "", err
	}
	s, ok := out.(string)
	if !ok {
		return "", fmt.Errorf("canonicalisation gave %T, not N-Quads", out)
	}
	return s, nil
}

// canonicalFull canonicalises a document as json-gold does from the
// start, contexts included.
func canonicalFull(doc map[string]any) (string, error) {
	out, err := ld.NewJsonLdProcessor().Normalize(doc, canonicalOptions())
	if err != nil {
		return "", err
	}
	s, ok := out.(string)
	if !ok {
		return "", fmt.Errorf("canonicalisation gave %T, not N-Quads", out)
	}
	return s, nil
}

func canonicalOptions() *ld.JsonLdOptions {
	opts := ld.NewJsonLdOptions("")
	opts.Algorithm = ld.AlgorithmURDNA2015
	opts.Format = "application/n-quads"
	opts.DocumentLoader = loader{}
	opts.SafeMode = true
	return opts
}

// toRDFOptions are the options json-gold's Normalize expands and converts
// to RDF with: its own, keeping only the processing mode and the document
// loader of the caller's (so SafeMode does not apply to expansion there,
// and must not here, or the same document would canonicalise differently).
func toRDFOptions() *ld.JsonLdOptions {
	n := canonicalOptions()
	opts := ld.NewJsonLdOptions(n.Base)
	opts.ProcessingMode = n.ProcessingMode
	opts.Format = ""
	opts.DocumentLoader = n.DocumentLoader
	return opts
}

// expandedList is the last step of JSON-LD expansion: an empty object is
// nothing, a lone @graph is its contents, and the result is a list.
func expandedList(expanded any) []any {
	m, isMap := expanded.(map[string]any)
	if isMap && len(m) == 0 {
		return []any{}
	}
	if g, ok := m["@graph"]; isMap && ok && len(m) == 1 {
		expanded = g
	}
	if expanded == nil {
		return []any{}
	}
	if l, ok := expanded.([]any); ok {
		return l
	}
	return []any{expanded}
}

// contexts holds the active context of each list of embedded context URLs
// met so far (a handful: the credential's, the DID document's). Expansion
// only reads an active context (processing a context copies it), so one
// is shared by every canonicalisation.
var contexts sync.Map // URLs joined by spaces → *ld.Context

// processedContext is the active context a document's @context value
// gives, when it names only embedded contexts (ok false otherwise).
func processedContext(value any) (*ld.Context, bool, error) {
	var urls []string
	switch v := value.(type) {
	case string:
		urls = []string{v}
	case []any:
		for _, u := range v {
			s, ok := u.(string)
			if !ok {
				return nil, false, nil
			}
			urls = append(urls, s)
		}
	default:
		return nil, false, nil
	}
	for _, u := range urls {
		if _, known := contextFile[u]; !known {
			return nil, false, nil
		}
	}
	key := strings.Join(urls, " ")
	if c, ok := contexts.Load(key); ok {
		return c.(*ld.Context), true, nil
	}
	c, err := ld.NewContext(nil, toRDFOptions()).Parse(value)
	if err != nil {
		return nil, false, err
	}
	actual, _ := contexts.LoadOrStore(key, c)
	return actual.(*ld.Context), true, nil
}
