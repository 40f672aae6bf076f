package credential

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// Key is one of the issuer's Ed25519 keys.
type Key struct {
	Private ed25519.PrivateKey
	// ID is the key's fragment in the issuer's DID document, derived from
	// the public key (so it never changes and never collides).
	ID string
}

func newKey(priv ed25519.PrivateKey) Key {
	sum := sha256.Sum256(priv.Public().(ed25519.PublicKey))
	return Key{Private: priv, ID: "key-" + hex.EncodeToString(sum[:6])}
}

// Issuer is the registry as the issuer of credentials: a did:web
// identifier, a profile, and its keys, the last of which signs. Earlier
// keys stay published (marked as retired in the profile) so that the
// credentials they signed still verify.
type Issuer struct {
	DID  string // did:web:…
	Name string
	URL  string // the registry's public URL
	Keys []Key
}

// NewIssuer makes the issuer of a registry served at baseURL.
func NewIssuer(baseURL, name string, keys []Key) (*Issuer, error) {
	did, err := DIDWeb(baseURL)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errors.New("the issuer has no key")
	}
	return &Issuer{DID: did, Name: name, URL: strings.TrimSuffix(baseURL, "/") + "/", Keys: keys}, nil
}

// DIDWeb is the did:web identifier of a site: its host, the port's colon
// percent-encoded, then the path's segments joined by colons. Its DID
// document is at /.well-known/did.json (no path) or at <path>/did.json.
func DIDWeb(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not an absolute URL, so the registry has no did:web identifier", baseURL)
	}
	did := "did:web:" + strings.ReplaceAll(u.Host, ":", "%3A")
	for _, seg := range strings.Split(strings.Trim(u.Path, "/"), "/") {
		if seg != "" {
			did += ":" + url.PathEscape(seg)
		}
	}
	return did, nil
}

// Signer is the issuer's current key, signing as its verification method.
func (i *Issuer) Signer() Signer {
	k := i.Keys[len(i.Keys)-1]
	return Signer{Key: k.Private, VerificationMethod: i.DID + "#" + k.ID}
}

// DIDDocument is the issuer's DID document: every key as a Multikey,
// each an assertion method, so credentials signed before a rotation keep
// verifying.
func (i *Issuer) DIDDocument() map[string]any {
	var methods, ids []any
	for _, k := range i.Keys {
		id := i.DID + "#" + k.ID
		methods = append(methods, map[string]any{"id": id, "type": "Multikey", "controller": i.DID,
			"publicKeyMultibase": EncodeMultikey(k.Private.Public().(ed25519.PublicKey))})
		ids = append(ids, id)
	}
	return map[string]any{
		"@context":           []any{ContextDID, ContextMultikey},
		"id":                 i.DID,
		"verificationMethod": methods,
		"assertionMethod":    ids,
	}
}

// PublicKey resolves one of the issuer's verification methods.
func (i *Issuer) PublicKey(vm string) (ed25519.PublicKey, error) {
	for _, k := range i.Keys {
		if vm == i.DID+"#"+k.ID {
			return k.Private.Public().(ed25519.PublicKey), nil
		}
	}
	return nil, fmt.Errorf("%s is not a key of %s", vm, i.DID)
}

// ParseKeys reads Ed25519 private keys in PEM (PKCS #8 "PRIVATE KEY"
// blocks, as `openssl genpkey -algorithm ed25519` writes them), oldest
// first: rotate by appending a new key. Errors never quote key material.
func ParseKeys(data []byte) ([]Key, error) {
	var keys []Key
	for n := 1; ; n++ {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("PEM block %d is %q, not a PRIVATE KEY", n, block.Type)
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d: not a PKCS #8 private key", n)
		}
		priv, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("PEM block %d: a %T, not an Ed25519 key", n, k)
		}
		keys = append(keys, newKey(priv))
	}
	if len(keys) == 0 {
		return nil, errors.New("no PEM \"PRIVATE KEY\" block (make one with: openssl genpkey -algorithm ed25519)")
	}
	return keys, nil
}

// LoadKeyFile reads an issuer key file (see ParseKeys).
func LoadKeyFile(path string) ([]Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	keys, err := ParseKeys(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// KeyFromSeed makes a key from a 32-byte Ed25519 seed.
func KeyFromSeed(seed []byte) (Key, error) {
	if len(seed) != ed25519.SeedSize {
		return Key{}, fmt.Errorf("an Ed25519 seed has %d bytes, not %d", ed25519.SeedSize, len(seed))
	}
	return newKey(ed25519.NewKeyFromSeed(seed)), nil
}

// EncodeKey writes a key as a PEM block, for key files.
func EncodeKey(k Key) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.Private)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
