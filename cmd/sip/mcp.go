package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sipregistry/sip/api/mcp"
)

const mcpAbout = `Serve sip's MCP tools on standard input and output, for a local MCP
client that starts its servers as programs. Every tool calls the HTTP API
of the registry at --url (default $SIP_URL, else http://127.0.0.1:8080)
with the API key in $SIP_API_KEY (none: only register_agent and the
public reads work). A registry serves the same tools itself at /mcp.`

func runMCP(ctx context.Context, e env, args []string) int {
	fs := newFlagSet("mcp", "--stdio [--url URL]", mcpAbout)
	stdio := fs.Bool("stdio", false, "serve on standard input and output (the only transport here)")
	base := fs.String("url", "", "the registry's address")
	pos, code, ok := parseFlags(fs, e, args)
	if !ok {
		return code
	}
	if !*stdio || len(pos) > 0 {
		fs.SetOutput(e.stderr)
		fs.Usage()
		return exitUsage
	}
	if *base == "" {
		*base = e.getenv("SIP_URL")
	}
	if *base == "" {
		*base = "http://127.0.0.1:8080"
	}
	*base = strings.TrimSuffix(*base, "/")
	client := &http.Client{Timeout: 30 * time.Second}
	doc, err := fetchDocument(ctx, client, *base)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip mcp: %v\n", err)
		return exitUnavailable
	}
	srv, err := mcp.New(mcp.Config{API: mcp.Remote(*base, e.getenv("SIP_API_KEY"), client), Document: doc,
		Version: version, BaseURL: *base, Logger: slog.New(slog.NewTextHandler(e.stderr, nil))})
	if err != nil {
		fmt.Fprintf(e.stderr, "sip mcp: %v\n", err)
		return exitData
	}
	if err := srv.ServeStdio(ctx, os.Stdin, nopWriteCloser{e.stdout}); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		fmt.Fprintf(e.stderr, "sip mcp: %v\n", err)
		return exitUnavailable
	}
	return exitOK
}

// fetchDocument reads the registry's OpenAPI document: the tools are
// the operations it serves.
func fetchDocument(ctx context.Context, client *http.Client, base string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/openapi.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the registry's OpenAPI document: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the registry's OpenAPI document: %s answered %s", base, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 8<<20))
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
