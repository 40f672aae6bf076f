package registry

import (
	"crypto/rand"
	"encoding/hex"
)

// NewID returns an opaque id: prefix followed by 20 random hex digits
// from crypto/rand, e.g. "res_4f1c…".
func NewID(prefix string) string {
	b := make([]byte, 10)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
