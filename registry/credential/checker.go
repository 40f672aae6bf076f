package credential

import (
	"context"
	"errors"
	"sync"
	"time"
)

// CachedStatus keeps fetched status lists for a while: a verifier sees a
// revocation within TTL of its issuer's list changing.
type CachedStatus struct {
	Source StatusSource
	TTL    time.Duration
	Now    func() time.Time
	// ListMemory refuses a list older than one it served before.
	ListMemory

	mu    sync.Mutex
	lists map[string]cachedList
}

type cachedList struct {
	raw     []byte
	fetched time.Time
}

// maxCachedLists bounds the cache; it is emptied when full.
const maxCachedLists = 1024

// StatusList returns a list fetched less than TTL ago, or fetches it.
func (c *CachedStatus) StatusList(u string) ([]byte, error) {
	now := c.Now()
	c.mu.Lock()
	l, ok := c.lists[u]
	c.mu.Unlock()
	if ok && now.Sub(l.fetched) < c.TTL {
		return l.raw, nil
	}
	raw, err := c.Source.StatusList(u)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.lists == nil || len(c.lists) >= maxCachedLists {
		c.lists = map[string]cachedList{}
	}
	c.lists[u] = cachedList{raw, now}
	c.mu.Unlock()
	return raw, nil
}

// Checker verifies credentials of other registries: keys from their
// did:web documents, status from their lists.
type Checker struct {
	Keys   KeyResolver
	Status StatusSource
	Now    func() time.Time
}

// Check verifies a credential and returns the report.
func (c *Checker) Check(raw []byte) Report { return Verify(raw, c.Keys, c.Status, c.Now()) }

// Recheck is Check as an error: nil when every check passes.
func (c *Checker) Recheck(_ context.Context, raw []byte) error {
	if r := c.Check(raw); !r.Verified {
		for _, ch := range r.Checks {
			if !ch.OK {
				return errors.New(ch.Name + ": " + ch.Detail)
			}
		}
		return errors.New("not verified")
	}
	return nil
}
