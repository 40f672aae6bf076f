package credential

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"
)

// maxSigned bounds the signed credentials kept in memory.
const maxSigned = 4096

// signedCredentials keeps credentials already signed, by what was signed:
// the badge, the signing key and the proof's date. Signing is
// deterministic, so a hit gives the same bytes signing again would, and a
// pass that changed (a new status entry, a renamed agent, a rotated key)
// misses. Each download of a result's credential after the first is a
// hit.
var signedCredentials = signedCache{m: map[[sha256.Size]byte]map[string]any{}}

type signedCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]map[string]any
}

// sign is s.Sign(doc, created), from the cache when doc was signed
// before. The caller owns what it gets: a copy of the cached credential.
func (c *signedCache) sign(s Signer, doc map[string]any, created time.Time) (map[string]any, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	h.Write(s.Key.Public().(ed25519.PublicKey))
	h.Write([]byte("\x00" + s.VerificationMethod + "\x00" + created.UTC().Format(time.RFC3339) + "\x00"))
	h.Write(b)
	var key [sha256.Size]byte
	h.Sum(key[:0])

	c.mu.Lock()
	cached, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return cloneJSON(cached).(map[string]any), nil
	}
	signed, err := s.Sign(doc, created)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) >= maxSigned {
		for k := range c.m { // drop any one: the map's order is random
			delete(c.m, k)
			break
		}
	}
	c.m[key] = cloneJSON(signed).(map[string]any)
	c.mu.Unlock()
	return signed, nil
}

// cloneJSON copies the maps and lists of a JSON value, so that neither
// the cache nor a caller sees the other's changes.
func cloneJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = cloneJSON(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cloneJSON(x)
		}
		return out
	default:
		return v
	}
}
