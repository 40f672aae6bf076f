// Package credential issues and verifies passes as Open Badges 3.0
// credentials (the W3C Verifiable Credentials 2.0 data model) with Data
// Integrity proofs of the eddsa-rdfc-2022 cryptosuite: the credential is
// canonicalised as RDF (RDFC-1.0, by json-gold) and signed with Ed25519.
// The JSON-LD contexts it knows are embedded: nothing is fetched at run
// time, and a document that names any other context is refused. So is a
// document with a property no context defines: JSON-LD expansion would
// drop it, and the signature would not cover it.
package credential

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/piprate/json-gold/ld"
)

// Context URLs the credentials use.
const (
	ContextVC       = "https://www.w3.org/ns/credentials/v2"
	ContextOB       = "https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json"
	ContextDI       = "https://w3id.org/security/data-integrity/v2"
	ContextMultikey = "https://w3id.org/security/multikey/v1"
	ContextDID      = "https://www.w3.org/ns/did/v1"
	// ContextAttestation defines an AgentControlAttestation's holder and
	// audience, so that its signature covers them.
	ContextAttestation = "https://sipregistry.github.io/ns/attestation/v1"
	// ContextCredential defines what sip's credentials say besides Open
	// Badges: the provenance of a pass another registry graded, so that
	// the signature covers it.
	ContextCredential = "https://sipregistry.github.io/ns/credential/v1"
	contextsDirectory = "contexts"
)

//go:embed contexts/*.jsonld
var contextFiles embed.FS

// contextFile maps each known context URL to its embedded copy (from the
// npm packages of the W3C, Digital Bazaar and the Digital Credentials
// Consortium, which verifiers use).
var contextFile = map[string]string{
	ContextVC:       "credentials-v2.jsonld",
	ContextOB:       "ob-v3p0-3.0.3.jsonld",
	ContextDI:       "data-integrity-v2.jsonld",
	ContextMultikey: "multikey-v1.jsonld",
	ContextDID:      "did-v1.jsonld",
	// sip's own, published nowhere: only sip reads attestations.
	ContextAttestation: "sip-attestation-v1.jsonld",
	// sip's own too; a verifier of a credential that names it loads it
	// from this file (docs/credentials.md).
	ContextCredential: "sip-credential-v1.jsonld",
}

// loader serves the embedded contexts and nothing else.
type loader struct{}

var (
	parsedOnce sync.Once
	parsed     map[string]any
	parseErr   error
)

func (loader) LoadDocument(u string) (*ld.RemoteDocument, error) {
	parsedOnce.Do(func() {
		parsed = map[string]any{}
		for url, name := range contextFile {
			b, err := contextFiles.ReadFile(contextsDirectory + "/" + name)
			if err != nil {
				parseErr = err
				return
			}
			var doc any
			if err := json.Unmarshal(b, &doc); err != nil {
				parseErr = fmt.Errorf("%s: %w", name, err)
				return
			}
			parsed[url] = doc
		}
	})
	if parseErr != nil {
		return nil, parseErr
	}
	doc, ok := parsed[u]
	if !ok {
		return nil, ld.NewJsonLdError(ld.LoadingDocumentFailed, fmt.Sprintf("context %s is not one this registry knows (no context is fetched)", u))
	}
	return &ld.RemoteDocument{DocumentURL: u, Document: doc}, nil
}

// ErrUndefinedTerm is a document with a property that none of its
// contexts defines (errors.Is).
var ErrUndefinedTerm = errors.New("it has a property that none of its contexts defines, which its signature would not cover")
