package mcp_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/mcp"
)

// TestStartEvaluationBody: what start_evaluation sends to POST …/start
// for each shape of its arguments: register goes into the body as given,
// and without it the body asks for nothing.
func TestStartEvaluationBody(t *testing.T) {
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sent []string
	fake := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"success":true}`))
	})
	s, err := mcp.New(mcp.Config{API: fake, Document: doc, Version: "t", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.ServeMCP(w, r, "127.0.0.1") }))
	defer srv.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"no register", map[string]any{"ref": "poaw"}, "POST /api/v1/evaluations/poaw/start application/json {}"},
		{"register true", map[string]any{"ref": "poaw", "register": true}, `POST /api/v1/evaluations/poaw/start application/json {"register":true}`},
		{"register false", map[string]any{"ref": "poaw", "register": false}, `POST /api/v1/evaluations/poaw/start application/json {"register":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			sent = nil
			mu.Unlock()
			if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "start_evaluation", Arguments: tc.args}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(sent) != 1 || sent[0] != tc.want {
				t.Errorf("sent %q, want [%q]", sent, tc.want)
			}
		})
	}
}
