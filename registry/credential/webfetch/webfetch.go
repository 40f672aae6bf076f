// Package webfetch fetches other registries' documents (DID documents,
// status list credentials) over HTTP(S) for registry/credential, which
// reaches the network only through its Fetcher interface.
package webfetch

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/sipregistry/sip/registry/credential"
)

// Client is a credential.Fetcher over an HTTP client.
type Client struct {
	// HTTP makes the requests (http.DefaultClient when nil; sip gives it
	// a timeout).
	HTTP *http.Client
}

// Fetch GETs url and reads its body, at most max bytes.
func (c Client) Fetch(ctx context.Context, url, accept string, max int64) ([]byte, error) {
	client := c.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil || int64(len(body)) > max {
		return nil, credential.ErrTooLarge
	}
	return body, nil
}

// Issuers reaches other registries over HTTP(S) for credentials
// presented to this one (an evaluation.Issuers): the keys of one issuer
// at a time, from its DID document and no other's, and status lists.
type Issuers struct {
	HTTP *http.Client
}

// KeysOf resolves keys of issuer only.
func (i Issuers) KeysOf(issuer string) credential.KeyResolver {
	return &credential.WebResolver{Fetch: Client(i), Allow: func(did string) bool { return did == issuer }}
}

// Status fetches status lists.
func (i Issuers) Status() credential.StatusSource {
	return &credential.WebStatus{Fetch: Client(i)}
}
