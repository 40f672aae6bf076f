package credential

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Fetcher reads a document another registry publishes (a DID document, a
// status list credential) by its URL: its body, at most max bytes; an
// error for any answer but 200 OK ("URL answered STATUS"), and one that
// is ErrTooLarge for a longer or unreadable body. sip serve wires it to
// HTTP(S) (registry/credential/webfetch); the domain itself reaches no
// network.
type Fetcher interface {
	Fetch(ctx context.Context, url, accept string, max int64) ([]byte, error)
}

// ErrTooLarge is a fetched document that exceeds its bound or cannot be
// read.
var ErrTooLarge = errors.New("cannot be read or exceeds its size bound")

// DIDWebURL is where a did:web identifier's document is: https, the host
// (the port's %3A decoded), then /.well-known/did.json or the path's
// segments and /did.json. Loopback hosts are fetched over http, for
// development and tests.
func DIDWebURL(did string) (string, error) {
	rest, ok := strings.CutPrefix(did, "did:web:")
	if !ok || rest == "" {
		return "", fmt.Errorf("%q is not a did:web identifier", did)
	}
	parts := strings.Split(rest, ":")
	host, err := url.PathUnescape(parts[0])
	if err != nil || host == "" || strings.ContainsAny(host, "/?#@") {
		return "", fmt.Errorf("%q has no valid host", did)
	}
	path := "/.well-known"
	if len(parts) > 1 {
		path = ""
		for _, p := range parts[1:] {
			seg, err := url.PathUnescape(p)
			if err != nil || seg == "" || seg == "." || seg == ".." || strings.Contains(seg, "/") {
				return "", fmt.Errorf("%q has an invalid path", did)
			}
			path += "/" + url.PathEscape(seg)
		}
	}
	scheme := "https"
	if h, _, err := net.SplitHostPort(host); err == nil && isLoopback(h) || isLoopback(host) {
		scheme = "http"
	}
	return scheme + "://" + host + path + "/did.json", nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// WebResolver resolves did:web keys by fetching DID documents, each once.
type WebResolver struct {
	Fetch Fetcher
	// Allow, when set, says which issuers may be fetched at all: a
	// server checking credentials for its users fetches only issuers it
	// trusts, never a URL a caller chose.
	Allow func(did string) bool

	mu   sync.Mutex
	docs map[string]fetchedDoc
}

type fetchedDoc struct {
	doc     map[string]any
	fetched time.Time
}

// didTTL is how long a fetched DID document is used: an issuer's new key
// is seen within it.
const didTTL = 10 * time.Minute

// maxDIDDocument bounds a fetched DID document.
const maxDIDDocument = 64 << 10

// PublicKey resolves a verification method did:web:…#fragment.
func (r *WebResolver) PublicKey(vm string) (ed25519.PublicKey, error) {
	did, _, _ := strings.Cut(vm, "#")
	doc, err := r.Document(context.Background(), did)
	if err != nil {
		return nil, err
	}
	return keyIn(doc, did, vm)
}

// Document fetches (once) the DID document of a did:web issuer.
func (r *WebResolver) Document(ctx context.Context, did string) (map[string]any, error) {
	if r.Allow != nil && !r.Allow(did) {
		return nil, fmt.Errorf("%s is not a trusted issuer", did)
	}
	r.mu.Lock()
	f, ok := r.docs[did]
	r.mu.Unlock()
	if ok && time.Since(f.fetched) < didTTL {
		return f.doc, nil
	}
	var doc map[string]any
	u, err := DIDWebURL(did)
	if err != nil {
		return nil, err
	}
	body, err := r.Fetch.Fetch(ctx, u, "application/did+json, application/json", maxDIDDocument)
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("the DID document of %s cannot be read (or exceeds %d bytes)", did, maxDIDDocument)
	}
	if err != nil {
		return nil, fmt.Errorf("fetching the DID document of %s: %w", did, err)
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the DID document of %s is not JSON", did)
	}
	if doc["id"] != did {
		return nil, fmt.Errorf("the DID document at %s is of %v, not %s", u, doc["id"], did)
	}
	r.mu.Lock()
	if r.docs == nil || len(r.docs) >= maxCachedLists {
		r.docs = map[string]fetchedDoc{}
	}
	r.docs[did] = fetchedDoc{doc, time.Now()}
	r.mu.Unlock()
	return doc, nil
}

// keyIn finds an assertion method's Multikey in a DID document.
func keyIn(doc map[string]any, did, vm string) (ed25519.PublicKey, error) {
	asserts := false
	for _, a := range asList(doc["assertionMethod"]) {
		if a == vm {
			asserts = true
		}
	}
	if !asserts {
		return nil, fmt.Errorf("%s is not an assertion method of %s", vm, did)
	}
	for _, m := range asList(doc["verificationMethod"]) {
		m, _ := m.(map[string]any)
		if m["id"] != vm {
			continue
		}
		if m["controller"] != did {
			return nil, fmt.Errorf("%s is controlled by %v, not %s", vm, m["controller"], did)
		}
		s, _ := m["publicKeyMultibase"].(string)
		return DecodeMultikey(s)
	}
	return nil, fmt.Errorf("%s is not a key of %s", vm, did)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// WebStatus fetches status list credentials. It refuses a list older
// than one it fetched before (ListMemory): keep one for as long as the
// verifier runs.
type WebStatus struct {
	Fetch Fetcher
	ListMemory
}

// maxStatusList bounds a fetched status list credential.
const maxStatusList = 1 << 20

// StatusList fetches a status list credential.
func (w *WebStatus) StatusList(u string) ([]byte, error) {
	body, err := w.Fetch.Fetch(context.Background(), u, "application/json", maxStatusList)
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%s cannot be read (or exceeds %d bytes)", u, maxStatusList)
	}
	return body, err
}
