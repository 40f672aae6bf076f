package registry

import (
	"crypto/sha256"
	"encoding/base32"
	"strings"
)

// LegacyKeyPrefix begins the API keys SafeMolt issued. Agents imported
// from SafeMolt keep their keys: such a key carries no key id of its own,
// so its id is derived from it (LegacyKeyID), and the store keeps only
// that id and the key's hash, as for any key.
const LegacyKeyPrefix = "safemolt_"

var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// LegacyKeyID returns the key id of a SafeMolt key: "sm" and ten base32
// characters of a SHA-256 of the key (50 bits; 's' and 'm' are not hex
// digits, so it never equals the id of a key sip made). "" when apiKey is
// not shaped like a SafeMolt key.
func LegacyKeyID(apiKey string) string {
	rest, ok := strings.CutPrefix(apiKey, LegacyKeyPrefix)
	if !ok || len(rest) < 16 || len(rest) > 64 {
		return ""
	}
	for _, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return ""
		}
	}
	sum := sha256.Sum256([]byte("sip legacy key id\x00" + apiKey))
	return "sm" + lowerBase32.EncodeToString(sum[:])[:10]
}
