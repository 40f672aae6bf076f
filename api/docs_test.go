package api_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
)

// TestAPIReferenceCoversEveryOperation: /docs/api shows every operation
// of the document, each with its summary, an example of every success
// body, and its errors; it runs no script.
func TestAPIReferenceCoversEveryOperation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		resp, body := getPage(t, webServer(t, s)+"/docs/api")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if strings.Contains(body, "<script") || strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src") {
			t.Error("the reference runs scripts")
		}
		raw, err := api.OpenAPI()
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Paths map[string]map[string]json.RawMessage `json:"paths"`
		}
		type operation struct {
			OperationID string                     `json:"operationId"`
			Summary     string                     `json:"summary"`
			Description string                     `json:"description"`
			Tags        []string                   `json:"tags"`
			Responses   map[string]json.RawMessage `json:"responses"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		articles := regexp.MustCompile(`(?s)<article class="op" aria-labelledby="([A-Za-z]+)">(.*?)</article>`).FindAllStringSubmatch(body, -1)
		shown := map[string]string{}
		for _, a := range articles {
			shown[a[1]] = a[2]
		}
		n := 0
		for path, item := range doc.Paths {
			for method, rawOp := range item {
				if method == "parameters" {
					continue
				}
				var op operation
				if err := json.Unmarshal(rawOp, &op); err != nil {
					t.Fatal(err)
				}
				n++
				t.Run(op.OperationID, func(t *testing.T) {
					if op.Summary == "" || op.Description == "" || len(op.Tags) == 0 {
						t.Errorf("%s %s: summary %q, description %d bytes, tags %v; want all three", method, path, op.Summary, len(op.Description), op.Tags)
					}
					html, ok := shown[op.OperationID]
					if !ok {
						t.Fatalf("%s %s is not in the reference", method, path)
					}
					for _, want := range []string{template(op.Summary), "<h4>Responses</h4>", "<details class=\"example\""} {
						if !strings.Contains(html, want) {
							t.Errorf("its section lacks %q", want)
						}
					}
					errors := false
					for code := range op.Responses {
						errors = errors || code == "default" || code[0] == '4' || code[0] == '5'
					}
					if !errors {
						t.Errorf("%s %s documents no error", method, path)
					}
				})
			}
		}
		if len(articles) != n {
			t.Errorf("%d operations shown, %d documented", len(articles), n)
		}
	})
}

// template escapes s as html/template writes text.
func template(s string) string {
	return strings.NewReplacer("&", "&amp;", "'", "&#39;", "<", "&lt;", ">", "&gt;", `"`, "&#34;").Replace(s)
}

// TestDocumentExamplesMatchTheirSchemas: every example in the document
// (a schema's, a body's, a named one) is valid against its schema, so
// the reference never shows a shape the API would refuse or not send.
func TestDocumentExamplesMatchTheirSchemas(t *testing.T) {
	raw, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(t.Context(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatal(err)
	}
}
