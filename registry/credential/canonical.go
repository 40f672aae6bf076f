package credential

import (
	"errors"
	"fmt"
	"sync"

	"github.com/piprate/json-gold/ld"
)

// canonical is the RDFC-1.0 canonical N-Quads of a JSON-LD document. The
// document is expanded in safe mode, which fails on any property
// expansion would drop (ErrUndefinedTerm): the canonical form, and so the
// signature, covers every property there is.
//
// It gives what json-gold's own path gives (canonicalFull), with less
// work, since most of that path's time went on what is the same for
// every credential:
//   - the contexts: a document whose @context names only embedded
//     contexts is expanded from an active context processed once per list
//     of context URLs;
//   - one expansion instead of two (json-gold's Normalize expands its
//     input again, without safe mode; an expansion that succeeds in safe
//     mode is the same as one without it);
//   - checking IRIs: json-gold runs a large regular expression on every
//     distinct http(s) IRI of every document, most of which (the
//     vocabularies' terms) every credential repeats, so the answers are
//     kept across documents (rdf.go).
//
// Any other document takes json-gold's path.
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
	expanded, err := api.Expand(active, "", body, safeOptions(), false, nil)
	if err != nil {
		return "", undefinedTerm(err)
	}
	dataset, err := toRDF(api, expandedList(expanded))
	if err != nil {
		return "", err
	}
	return nquads(api.Normalize(dataset, canonicalOptions()))
}

// canonicalFull canonicalises a document as json-gold does from the
// start, contexts included, after the same safe-mode expansion.
func canonicalFull(doc map[string]any) (string, error) {
	proc := ld.NewJsonLdProcessor()
	expanded, err := proc.Expand(doc, safeOptions())
	if err != nil {
		return "", undefinedTerm(err)
	}
	return nquads(proc.Normalize(expanded, canonicalOptions()))
}

func undefinedTerm(err error) error {
	var le *ld.JsonLdError
	if errors.As(err, &le) && le.Code == ld.InvalidProperty {
		return ErrUndefinedTerm
	}
	return err
}

func nquads(out any, err error) (string, error) {
	if err != nil {
		return "", err
	}
	s, ok := out.(string)
	if !ok {
		return "", fmt.Errorf("canonicalisation gave %T, not N-Quads", out)
	}
	return s, nil
}

// safeOptions expand with the embedded contexts alone, refusing
// properties no context defines.
func safeOptions() *ld.JsonLdOptions {
	opts := ld.NewJsonLdOptions("")
	opts.DocumentLoader = loader{}
	opts.SafeMode = true
	return opts
}

// canonicalOptions canonicalise (URDNA2015, which RDFC-1.0 is) to N-Quads.
func canonicalOptions() *ld.JsonLdOptions {
	opts := safeOptions()
	opts.Algorithm = ld.AlgorithmURDNA2015
	opts.Format = "application/n-quads"
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
// met so far (a handful: the credential's, the DID document's, the status
// list's). Expansion only reads an active context (processing a scoped
// context copies it), so one is shared by every canonicalisation. Each
// carries the safe-mode options it was processed with, which expansion
// reads from it.
var contexts sync.Map // URLs joined by spaces → *ld.Context

// processedContext is the active context a document's @context value
// gives, when it names only embedded contexts (ok false otherwise).
func processedContext(value any) (*ld.Context, bool, error) {
	key, ok := contextKey(value)
	if !ok {
		return nil, false, nil
	}
	if c, ok := contexts.Load(key); ok {
		return c.(*ld.Context), true, nil
	}
	c, err := ld.NewContext(nil, safeOptions()).Parse(value)
	if err != nil {
		return nil, false, err
	}
	actual, _ := contexts.LoadOrStore(key, c)
	return actual.(*ld.Context), true, nil
}
