package mcp_test

import (
	"encoding/json"
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

// TestReviewStartEvaluationBody: what start_evaluation sends to
// POST …/start for each shape of its arguments.
func TestReviewStartEvaluationBody(t *testing.T) {
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	type seen struct{ method, path, ct, body string }
	var got []seen
	fake := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), string(b)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
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
	tools, _ := cs.ListTools(t.Context(), nil)
	for _, tl := range tools.Tools {
		if tl.Name == "start_evaluation" {
			raw, _ := json.Marshal(tl.InputSchema)
			t.Logf("start_evaluation input schema: %s", raw)
		}
	}
	for _, args := range []map[string]any{
		{"ref": "poaw"},
		{"ref": "poaw", "register": true},
		{"ref": "poaw", "register": false},
		{"ref": "poaw", "register": nil},
		{"ref": "poaw", "register": "yes"},
	} {
		got = nil
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "start_evaluation", Arguments: args})
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		t.Logf("args %v -> isError=%v sent %+v", args, res.IsError, got)
	}
}
