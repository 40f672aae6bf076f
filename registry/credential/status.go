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

// StatusList is the signed BitstringStatusListCredential of list n: the
// bits of the given indexes (within the list) set. It is dated asOf, the
// time of the latest change, so the same list gives the same bytes.
func (i *Issuer) StatusList(listURL string, set []int64, asOf time.Time) (map[string]any, error) {
	enc, err := EncodeList(set)
	if err != nil {
		return nil, err
	}
	doc := map[string]any{
		"@context":  []any{ContextVC},
		"id":        listURL,
		"type":      []any{"VerifiableCredential", "BitstringStatusListCredential"},
		"issuer":    i.DID,
		"validFrom": asOf.UTC().Format(time.RFC3339),
		"credentialSubject": map[string]any{"id": listURL + "#list", "type": "BitstringStatusList",
			"statusPurpose": Revocation, "encodedList": enc},
	}
	return i.Signer().Sign(doc, asOf)
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
		set, err := readList(raw, listURL, issuer, purpose, keys, now)
		if err != nil {
			return "", err
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

// readList verifies a status list credential and returns its bits.
func readList(raw []byte, listURL, issuer, purpose string, keys KeyResolver, now time.Time) ([]byte, error) {
	var list map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("the status list is not JSON")
	}
	if list["id"] != listURL || issuerID(list) != issuer {
		return nil, fmt.Errorf("the status list at %s is not the issuer's list of that address", listURL)
	}
	types, _ := list["type"].([]any)
	if len(types) != 2 || types[1] != "BitstringStatusListCredential" {
		return nil, errors.New("the status list is not a BitstringStatusListCredential")
	}
	proof, _ := list["proof"].(map[string]any)
	if vm, _ := proof["verificationMethod"].(string); !strings.HasPrefix(vm, issuer+"#") {
		return nil, errors.New("the status list is not signed by the issuer")
	}
	if _, err := VerifyProof(list, keys.PublicKey); err != nil {
		return nil, fmt.Errorf("the status list's signature: %w", err)
	}
	if err := validity(list, now); err != nil {
		return nil, fmt.Errorf("the status list: %w", err)
	}
	subject, _ := list["credentialSubject"].(map[string]any)
	if subject["statusPurpose"] != purpose {
		return nil, fmt.Errorf("the status list is for %v, not %s", subject["statusPurpose"], purpose)
	}
	enc, _ := subject["encodedList"].(string)
	return decodeList(enc)
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
