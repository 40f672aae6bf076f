package credential

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ListSize is how many credentials one status list covers: 131,072 bits,
// the minimum the Bitstring Status List recommendation sets so that a
// list does not tell which credential a verifier asks about.
const ListSize = 131072

// Revocation is the status purpose the registry publishes.
const Revocation = "revocation"

// Entry is the credentialStatus of the credential with a list index: its
// bit in list index/ListSize, published at listURL(n).
func Entry(listURL func(n int64) string, index int64) map[string]any {
	u := listURL(index / ListSize)
	bit := strconv.FormatInt(index%ListSize, 10)
	return map[string]any{"id": u + "#" + bit, "type": "BitstringStatusListEntry", "statusPurpose": Revocation,
		"statusListIndex": bit, "statusListCredential": u}
}

// EncodeList writes a status list: the bits of the given indexes (within
// the list) set, index 0 the most significant bit of the first byte,
// gzipped, then base64url multibase ("u").
func EncodeList(set []int64) (string, error) {
	bits := make([]byte, ListSize/8)
	for _, i := range set {
		if i < 0 || i >= ListSize {
			return "", fmt.Errorf("index %d is outside the list", i)
		}
		bits[i/8] |= 0x80 >> (i % 8)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(bits)
	if err := zw.Close(); err != nil {
		return "", err
	}
	return "u" + base64.RawURLEncoding.EncodeToString(b.Bytes()), nil
}

// maxListBytes bounds a decoded list (a gzip bomb is refused).
const maxListBytes = 16 << 20

// decodeList reads an encodedList.
func decodeList(s string) ([]byte, error) {
	raw, ok := strings.CutPrefix(s, "u")
	if !ok {
		return nil, errors.New("encodedList is not base64url multibase (u…)")
	}
	z, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(raw, "="))
	if err != nil {
		return nil, errors.New("encodedList is not base64url")
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, errors.New("encodedList is not gzip")
	}
	bits, err := io.ReadAll(io.LimitReader(zr, maxListBytes+1))
	if err != nil || len(bits) > maxListBytes {
		return nil, errors.New("encodedList cannot be read, or is too large")
	}
	return bits, nil
}

// StatusListWindow is the granularity of status lists' dates: a list
// served at now is dated the start of now's window and valid for two
// windows from then, so every replica signs the same bits into the same
// bytes within a window, a verifier that saw a list of a later window
// refuses an earlier one (ListMemory), and a copy of an old list replayed
// to one that saw none stops counting within two windows.
const StatusListWindow = 10 * time.Minute

// StatusList is the signed BitstringStatusListCredential of list n: the
// bits of the given indexes (within the list) set, dated the start of
// now's window and valid for two windows (StatusListWindow).
func (i *Issuer) StatusList(listURL string, set []int64, now time.Time) (map[string]any, error) {
	enc, err := EncodeList(set)
	if err != nil {
		return nil, err
	}
	from := now.UTC().Truncate(StatusListWindow)
	doc := map[string]any{
		"@context":   []any{ContextVC},
		"id":         listURL,
		"type":       []any{"VerifiableCredential", "BitstringStatusListCredential"},
		"issuer":     i.DID,
		"validFrom":  from.Format(time.RFC3339),
		"validUntil": from.Add(2 * StatusListWindow).Format(time.RFC3339),
		"credentialSubject": map[string]any{"id": listURL + "#list", "type": "BitstringStatusList",
			"statusPurpose": Revocation, "encodedList": enc},
	}
	return i.Signer().Sign(doc, from)
}

// ListMemory remembers, per status list, the newest validFrom seen in a
// list that verified, and refuses an older one: a list replayed from
// before a revocation does not undo it for a verifier that saw the
// revocation. The zero value is ready; verifiers that live long share
// one.
type ListMemory struct {
	mu     sync.Mutex
	newest map[string]time.Time
}

// maxRemembered bounds the memory; it is emptied when full.
const maxRemembered = 4096

// Fresh records from for the list at url, or refuses it when a newer one
// was seen.
func (m *ListMemory) Fresh(url string, from time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if seen, ok := m.newest[url]; ok && from.Before(seen) {
		return fmt.Errorf("the status list is dated %s, older than one already seen (%s): a replayed list", from.Format(time.RFC3339), seen.Format(time.RFC3339))
	}
	if m.newest == nil || len(m.newest) >= maxRemembered {
		m.newest = map[string]time.Time{}
	}
	m.newest[url] = from
	return nil
}

// freshness is a StatusSource that remembers the lists it served
// (ListMemory).
type freshness interface {
	Fresh(url string, from time.Time) error
}

// StatusSource fetches status list credentials (JSON).
type StatusSource interface {
	StatusList(url string) ([]byte, error)
}

// checkStatus reads a credential's credentialStatus: the list it names
// must be the issuer's own, signed by the issuer, valid, and not have the
// credential's bit set. Without a source, a credential with a status
// entry cannot be judged and fails (fail closed).
func checkStatus(doc map[string]any, issuer string, keys KeyResolver, src StatusSource, now time.Time) (string, error) {
	var entries []map[string]any
	switch v := doc["credentialStatus"].(type) {
	case nil:
		return "the credential has no status entry (it cannot be revoked)", nil
	case map[string]any:
		entries = []map[string]any{v}
	case []any:
		for _, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return "", errors.New("credentialStatus holds something other than entries")
			}
			entries = append(entries, m)
		}
	default:
		return "", errors.New("credentialStatus is not an entry")
	}
	for _, e := range entries {
		if e["type"] != "BitstringStatusListEntry" {
			return "", fmt.Errorf("credentialStatus type %v is not BitstringStatusListEntry", e["type"])
		}
		purpose, _ := e["statusPurpose"].(string)
		if purpose != Revocation && purpose != "suspension" {
			return "", fmt.Errorf("statusPurpose %q is neither revocation nor suspension", purpose)
		}
		listURL, _ := e["statusListCredential"].(string)
		idxText, _ := e["statusListIndex"].(string)
		idx, err := strconv.ParseInt(idxText, 10, 64)
		if err != nil || idx < 0 {
			return "", fmt.Errorf("statusListIndex %q is not an index", idxText)
		}
		if err := sameSite(issuer, listURL); err != nil {
			return "", err
		}
		if src == nil {
			return "", errors.New("the status list cannot be fetched here, so the credential cannot be judged")
		}
		raw, err := src.StatusList(listURL)
		if err != nil {
			return "", fmt.Errorf("the status list cannot be fetched: %w", err)
		}
		set, from, err := readList(raw, listURL, issuer, purpose, keys, now)
		if err != nil {
			return "", err
		}
		if f, ok := src.(freshness); ok {
			if err := f.Fresh(listURL, from); err != nil {
				return "", err
			}
		}
		if idx/8 >= int64(len(set)) {
			return "", fmt.Errorf("statusListIndex %d is outside the status list", idx)
		}
		if set[idx/8]&(0x80>>(idx%8)) != 0 {
			return "", fmt.Errorf("the credential is %s (%s)", map[string]string{Revocation: "revoked", "suspension": "suspended"}[purpose], e["id"])
		}
	}
	return "not revoked, by the issuer's status list", nil
}

// readList verifies a status list credential and returns its bits and
// its validFrom. A list must say when it was issued and until when it is
// valid: one without an end would count for ever, replayed.
func readList(raw []byte, listURL, issuer, purpose string, keys KeyResolver, now time.Time) ([]byte, time.Time, error) {
	var none time.Time
	var list map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, none, errors.New("the status list is not JSON")
	}
	if list["id"] != listURL || issuerID(list) != issuer {
		return nil, none, fmt.Errorf("the status list at %s is not the issuer's list of that address", listURL)
	}
	types, _ := list["type"].([]any)
	if len(types) != 2 || types[1] != "BitstringStatusListCredential" {
		return nil, none, errors.New("the status list is not a BitstringStatusListCredential")
	}
	proof, _ := list["proof"].(map[string]any)
	if vm, _ := proof["verificationMethod"].(string); !strings.HasPrefix(vm, issuer+"#") {
		return nil, none, errors.New("the status list is not signed by the issuer")
	}
	if _, err := VerifyProof(list, keys.PublicKey); err != nil {
		return nil, none, fmt.Errorf("the status list's signature: %w", err)
	}
	from, _ := dateOf(list, "validFrom")
	until, _ := dateOf(list, "validUntil")
	if from.IsZero() || until.IsZero() {
		return nil, none, errors.New("the status list does not say when it was issued and until when it is valid (validFrom, validUntil)")
	}
	if err := validity(list, now); err != nil {
		return nil, none, fmt.Errorf("the status list: %w", err)
	}
	subject, _ := list["credentialSubject"].(map[string]any)
	if subject["statusPurpose"] != purpose {
		return nil, none, fmt.Errorf("the status list is for %v, not %s", subject["statusPurpose"], purpose)
	}
	enc, _ := subject["encodedList"].(string)
	bits, err := decodeList(enc)
	return bits, from, err
}

// sameSite requires a status list to be on the issuer's did:web host: a
// credential cannot send a verifier to fetch an address of its choosing.
func sameSite(issuer, listURL string) error {
	site, err := DIDWebURL(issuer)
	if err != nil {
		return fmt.Errorf("the status list of a non-did:web issuer cannot be checked: %v", err)
	}
	a, _ := url.Parse(site)
	b, err := url.Parse(listURL)
	if err != nil || b.Scheme != a.Scheme || b.Host != a.Host {
		return fmt.Errorf("the status list %q is not on the issuer's site %s://%s", listURL, a.Scheme, a.Host)
	}
	return nil
}
