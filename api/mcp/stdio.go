package mcp

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one client on in and out (newline-delimited JSON-RPC,
// MCP's stdio transport) until it goes away or ctx ends.
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return s.sdk.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out, MaxLineLength: MaxBody})
}

// Remote is the HTTP API of the sip server at base, over the network:
// what the tools call when the MCP server runs beside a local client
// (`sip mcp --stdio`) rather than in the registry. key, when set, is the
// agent's API key, sent as a bearer token with every call; the server at
// base decides everything, as for any HTTP client.
func Remote(base, key string, client *http.Client) http.Handler {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	base = strings.TrimSuffix(base, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := url.Parse(base + r.URL.RequestURI())
		if err != nil {
			http.Error(w, `{"success":false}`, http.StatusBadGateway)
			return
		}
		out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), r.Body)
		if err != nil {
			http.Error(w, `{"success":false}`, http.StatusBadGateway)
			return
		}
		for _, h := range []string{"Content-Type", "Accept"} {
			if v := r.Header.Get(h); v != "" {
				out.Header.Set(h, v)
			}
		}
		if key != "" {
			out.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(out)
		if err != nil {
			unreachable(w, base)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, io.LimitReader(resp.Body, 64<<20))
	})
}

// unreachable answers in the API's error shape when the registry cannot
// be reached.
func unreachable(w http.ResponseWriter, base string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	msg := "the registry at " + base + " cannot be reached"
	body := `{"success":false,"error":` + quoteJSON(msg) + `,"hint":"Check the address and the network, then try again.",` +
		`"error_detail":{"code":"unavailable","message":` + quoteJSON(msg) + `,"hint":"Check the address and the network, then try again."},"request_id":""}`
	io.WriteString(w, body)
}
