package credential

import (
	"regexp"
	"strings"
	"sync"
)

// The proof options a credential's signature covers (its type,
// cryptosuite, purpose, verification method and date, with the
// credential's contexts) are canonicalised for every credential signed
// and verified, and differ only in their date. canonicalProofOptions
// canonicalises them once per list of contexts and verification method
// with a placeholder date, and puts the real date in its place: a date
// written as this registry writes them needs no escaping in N-Quads, and
// the proof options are one blank node, so its label and the order of the
// lines do not depend on the date. Any other proof options (another
// property, a date written otherwise) are canonicalised in full.

// placeholderDate stands for the date in a kept canonical form.
const placeholderDate = "0000-01-01T00:00:00Z"

var dateUTC = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$`)
})

// maxProofTemplates bounds the canonical forms kept (a verifier meets
// other issuers' verification methods).
const maxProofTemplates = 256

var proofTemplates = struct {
	mu sync.Mutex
	m  map[string]string // contexts and verification method → canonical form with placeholderDate
}{m: map[string]string{}}

func canonicalProofOptions(config map[string]any) (string, error) {
	created, _ := config["created"].(string)
	vm, _ := config["verificationMethod"].(string)
	contexts, known := contextKey(config["@context"])
	if len(config) != 6 || !known || vm == "" || !dateUTC().MatchString(created) ||
		config["type"] != ProofType || config["cryptosuite"] != Cryptosuite || config["proofPurpose"] != AssertionMethod {
		return canonical(config)
	}
	key := contexts + "\x00" + vm
	proofTemplates.mu.Lock()
	template, ok := proofTemplates.m[key]
	proofTemplates.mu.Unlock()
	if !ok {
		withPlaceholder := make(map[string]any, len(config))
		for k, v := range config {
			withPlaceholder[k] = v
		}
		withPlaceholder["created"] = placeholderDate
		c, err := canonical(withPlaceholder)
		if err != nil {
			return "", err
		}
		if !dateReplaceable(c) {
			return canonical(config)
		}
		template = c
		proofTemplates.mu.Lock()
		if len(proofTemplates.m) >= maxProofTemplates {
			clear(proofTemplates.m)
		}
		proofTemplates.m[key] = template
		proofTemplates.mu.Unlock()
	}
	return strings.Replace(template, `"`+placeholderDate+`"`, `"`+created+`"`, 1), nil
}

// dateReplaceable: the canonical form has one blank node, the placeholder
// date once, and no other line shares the beginning of the date's line up
// to the date (so no other date would sort the lines differently).
func dateReplaceable(c string) bool {
	if strings.Count(c, `"`+placeholderDate+`"`) != 1 || strings.Contains(c, "_:c14n1") {
		return false
	}
	var prefix string
	lines := strings.Split(strings.TrimSuffix(c, "\n"), "\n")
	for _, l := range lines {
		if i := strings.Index(l, `"`+placeholderDate+`"`); i >= 0 {
			prefix = l[:i]
		}
	}
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n == 1
}

// contextKey names a @context value made of embedded context URLs only.
func contextKey(value any) (string, bool) {
	switch v := value.(type) {
	case string:
		_, known := contextFile[v]
		return v, known
	case []any:
		urls := make([]string, len(v))
		for i, u := range v {
			s, ok := u.(string)
			if _, known := contextFile[s]; !ok || !known {
				return "", false
			}
			urls[i] = s
		}
		return strings.Join(urls, " "), true
	}
	return "", false
}
