package credential

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"

	"github.com/mr-tron/base58"
)

// ed25519Pub is the multicodec prefix of an Ed25519 public key (0xed,
// as an unsigned varint).
var ed25519Pub = []byte{0xed, 0x01}

// EncodeMultikey writes an Ed25519 public key as a Multikey's
// publicKeyMultibase: base58btc ("z") of the multicodec-prefixed key.
func EncodeMultikey(pub ed25519.PublicKey) string {
	return "z" + base58.Encode(append(append([]byte{}, ed25519Pub...), pub...))
}

// DecodeMultikey reads an Ed25519 publicKeyMultibase.
func DecodeMultikey(s string) (ed25519.PublicKey, error) {
	if !strings.HasPrefix(s, "z") {
		return nil, errors.New("publicKeyMultibase is not base58btc (z…)")
	}
	b, err := base58.Decode(s[1:])
	if err != nil {
		return nil, fmt.Errorf("publicKeyMultibase: %w", err)
	}
	if len(b) != 2+ed25519.PublicKeySize || b[0] != ed25519Pub[0] || b[1] != ed25519Pub[1] {
		return nil, errors.New("publicKeyMultibase is not an Ed25519 public key")
	}
	return ed25519.PublicKey(b[2:]), nil
}

// encodeSignature writes a proofValue: base58btc multibase.
func encodeSignature(sig []byte) string { return "z" + base58.Encode(sig) }

func decodeSignature(s string) ([]byte, error) {
	if !strings.HasPrefix(s, "z") {
		return nil, errors.New("proofValue is not base58btc (z…)")
	}
	b, err := base58.Decode(s[1:])
	if err != nil || len(b) != ed25519.SignatureSize {
		return nil, errors.New("proofValue is not an Ed25519 signature")
	}
	return b, nil
}
