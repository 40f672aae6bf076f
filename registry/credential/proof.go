package credential

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"
)

// Proof names of the Data Integrity proofs this package makes and checks.
const (
	ProofType   = "DataIntegrityProof"
	Cryptosuite = "eddsa-rdfc-2022"
	// AssertionMethod is the proof purpose of an issuer's credential.
	AssertionMethod = "assertionMethod"
)

// Signer signs as one verification method of the issuer.
type Signer struct {
	Key                ed25519.PrivateKey
	VerificationMethod string // e.g. did:web:registry.example#key-2
}

// Sign adds a Data Integrity proof (eddsa-rdfc-2022) to a JSON-LD
// document: the proof's options and the document are canonicalised
// (RDFC-1.0) and hashed (SHA-256) separately, and Ed25519 signs the two
// hashes joined, as the cryptosuite specifies. doc must not have a proof.
func (s Signer) Sign(doc map[string]any, created time.Time) (map[string]any, error) {
	if _, ok := doc["proof"]; ok {
		return nil, errors.New("the document already has a proof")
	}
	proof := map[string]any{
		"type":               ProofType,
		"cryptosuite":        Cryptosuite,
		"created":            created.UTC().Format(time.RFC3339),
		"verificationMethod": s.VerificationMethod,
		"proofPurpose":       AssertionMethod,
	}
	data, err := hashData(doc, proof)
	if err != nil {
		return nil, err
	}
	proof["proofValue"] = encodeSignature(ed25519.Sign(s.Key, data))
	out := make(map[string]any, len(doc)+1)
	for k, v := range doc {
		out[k] = v
	}
	out["proof"] = proof
	return out, nil
}

// hashData is what eddsa-rdfc-2022 signs: SHA-256 of the canonical proof
// options (with the document's context) joined to SHA-256 of the
// canonical document.
func hashData(doc, proof map[string]any) ([]byte, error) {
	config := make(map[string]any, len(proof)+1)
	for k, v := range proof {
		if k != "proofValue" {
			config[k] = v
		}
	}
	config["@context"] = doc["@context"]
	c, err := canonicalProofOptions(config)
	if err != nil {
		return nil, fmt.Errorf("canonicalising the proof: %w", err)
	}
	d, err := canonical(doc)
	if err != nil {
		return nil, fmt.Errorf("canonicalising the document: %w", err)
	}
	ch, dh := sha256.Sum256([]byte(c)), sha256.Sum256([]byte(d))
	return append(ch[:], dh[:]...), nil
}

// ProofError says which check of a proof failed.
type ProofError struct {
	Check  string // proof, signature
	Reason string
}

func (e *ProofError) Error() string { return e.Check + ": " + e.Reason }

// VerifyProof checks a document's Data Integrity proof with the public
// key resolve returns for its verification method, and returns the
// proof. It does not judge the document's meaning (issuer, validity,
// status): Verify does.
func VerifyProof(doc map[string]any, resolve func(verificationMethod string) (ed25519.PublicKey, error)) (map[string]any, error) {
	proof, ok := doc["proof"].(map[string]any)
	if !ok {
		return nil, &ProofError{"proof", "the credential has no proof (or more than one)"}
	}
	for k, want := range map[string]string{"type": ProofType, "cryptosuite": Cryptosuite, "proofPurpose": AssertionMethod} {
		if got, _ := proof[k].(string); got != want {
			return nil, &ProofError{"proof", fmt.Sprintf("%s is %q, not %q", k, got, want)}
		}
	}
	vm, _ := proof["verificationMethod"].(string)
	value, _ := proof["proofValue"].(string)
	sig, err := decodeSignature(value)
	if err != nil {
		return nil, &ProofError{"proof", err.Error()}
	}
	pub, err := resolve(vm)
	if err != nil {
		return nil, &ProofError{"issuer key", err.Error()}
	}
	unsigned := make(map[string]any, len(doc))
	for k, v := range doc {
		if k != "proof" {
			unsigned[k] = v
		}
	}
	data, err := hashData(unsigned, proof)
	if err != nil {
		return nil, &ProofError{"document", err.Error()}
	}
	if !ed25519.Verify(pub, data, sig) {
		return nil, &ProofError{"signature", "the signature does not match the credential: it was changed after signing, or signed by another key"}
	}
	return proof, nil
}
