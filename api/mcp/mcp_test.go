package mcp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/api/mcp"
	"github.com/sipregistry/sip/registry"
)

// newServer is an MCP server over a stand-in API that answers nothing:
// these tests read what the server says about itself.
func newServer(t *testing.T, base string) *mcp.Server {
	t.Helper()
	doc, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	s, err := mcp.New(mcp.Config{API: http.NotFoundHandler(), Document: doc, Version: "1.2.3", BaseURL: base, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func listTools(t *testing.T, s *mcp.Server) []*sdk.Tool {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.ServeMCP(w, r, "127.0.0.1") }))
	t.Cleanup(srv.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func strs(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		out = append(out, x.(string))
	}
	sort.Strings(out)
	return out
}

func asSlice(v any) []any        { s, _ := v.([]any); return s }
func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// TestToolsAgreeWithTheDocument reads the document with another parser
// (kin-openapi) and holds every tool to the operation it names: its
// arguments are the operation's path and query parameters and its body's
// fields (or the body whole, under one name), required alike, and its
// output is the operation's successful response, field by field. Every
// operation of the document is a tool or is listed, with a reason, as
// none.
func TestToolsAgreeWithTheDocument(t *testing.T) {
	doc := apitest.Spec(t)
	ops := map[string]*openapi3.Operation{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			ops[op.OperationID] = op
		}
	}
	for id := range ops {
		covered := mcp.NotTools[id] != ""
		for _, op := range mcp.ToolOps {
			covered = covered || op == id
		}
		if !covered {
			t.Errorf("the operation %s is neither a tool nor listed as none", id)
		}
	}
	same := regexp.MustCompile(`The same as (\w+) (\S+) of the HTTP API`)
	tools := listTools(t, newServer(t, ""))
	if len(tools) != len(mcp.ToolOps) {
		t.Errorf("tools/list has %d tools, the catalogue %d", len(tools), len(mcp.ToolOps))
	}
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			op := ops[mcp.ToolOps[tool.Name]]
			if op == nil {
				t.Fatalf("no operation %s", mcp.ToolOps[tool.Name])
			}
			m := same.FindStringSubmatch(tool.Description)
			if m == nil || doc.Paths.Find(m[2]) == nil || doc.Paths.Find(m[2]).GetOperation(m[1]) != op {
				t.Errorf("the description does not name the operation's method and path: %q", tool.Description)
			}
			var wantArgs, wantRequired []string
			params := doc.Paths.Find(m[2]).Parameters
			for _, p := range append(params, op.Parameters...) {
				if p.Value.In == "path" || p.Value.In == "query" {
					wantArgs = append(wantArgs, p.Value.Name)
					if p.Value.Required {
						wantRequired = append(wantRequired, p.Value.Name)
					}
				}
			}
			in := asMap(tool.InputSchema)
			gotArgs := keys(asMap(in["properties"]))
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				body := rb.Value.Content.Get("application/json").Schema.Value
				switch {
				case body.MaxProps != nil && *body.MaxProps == 0: // no body
				case len(body.Properties) > 0:
					for name := range body.Properties {
						wantArgs = append(wantArgs, name)
					}
					wantRequired = append(wantRequired, body.Required...)
				default: // one of several shapes, under one argument
					extra := slices.DeleteFunc(slices.Clone(gotArgs), func(a string) bool { return slices.Contains(wantArgs, a) })
					if len(extra) != 1 || len(asSlice(asMap(asMap(in["properties"])[extra[0]])["oneOf"])) != len(body.OneOf) {
						t.Errorf("the body of several shapes is not one argument with them all: %v", extra)
					}
					wantArgs = append(wantArgs, extra...)
					wantRequired = append(wantRequired, extra...)
				}
			}
			sort.Strings(wantArgs)
			sort.Strings(wantRequired)
			if !slices.Equal(gotArgs, wantArgs) {
				t.Errorf("arguments %v, the operation's %v", gotArgs, wantArgs)
			}
			if got := strs(in["required"]); !slices.Equal(got, wantRequired) {
				t.Errorf("required arguments %v, the operation's %v", got, wantRequired)
			}
			if in["additionalProperties"] != false {
				t.Error("the input schema takes arguments it does not name")
			}

			var oks []*openapi3.Schema
			for code, r := range op.Responses.Map() {
				if strings.HasPrefix(code, "2") {
					for _, c := range r.Value.Content {
						if !slices.ContainsFunc(oks, func(s *openapi3.Schema) bool { return s == c.Schema.Value }) {
							oks = append(oks, c.Schema.Value)
						}
					}
				}
			}
			out := asMap(tool.OutputSchema)
			if len(oks) == 1 && len(oks[0].OneOf) == 0 {
				want := keys(func() map[string]any {
					m := map[string]any{}
					for k := range oks[0].Properties {
						m[k] = true
					}
					return m
				}())
				if got := keys(asMap(out["properties"])); !slices.Equal(got, want) {
					t.Errorf("output fields %v, the response's %v", got, want)
				}
				req := slices.Clone(oks[0].Required)
				sort.Strings(req)
				if got := strs(out["required"]); !slices.Equal(got, req) {
					t.Errorf("required output fields %v, the response's %v", got, req)
				}
			} else if len(oks) > 0 && len(asSlice(out["oneOf"])) == 0 {
				t.Errorf("several response shapes and no oneOf: %v", keys(out))
			}
			if out != nil && out["type"] != "object" {
				t.Errorf("the output schema's type is %v, MCP wants object", out["type"])
			}
		})
	}
}

func fetch(t *testing.T, s *mcp.Server, path string, header http.Header) *http.Response {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	s.ServeDocument(w, r, path)
	return w.Result()
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestDiscoveryDocuments: the skill file, llms.txt and server.json name
// their version and the SHA-256 of their content (which holds), cover
// every tool and every handler of the catalogue, and answer an ETag.
func TestDiscoveryDocuments(t *testing.T) {
	const base = "https://sip.example.org"
	s := newServer(t, base)
	read := func(path string) (string, *http.Response) {
		resp := fetch(t, s, path, nil)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return string(b), resp
	}

	skill, resp := read(mcp.SkillPath)
	front, body, ok := strings.Cut(strings.TrimPrefix(skill, "---\n"), "\n---\n\n")
	if !strings.HasPrefix(skill, "---\n") || !ok {
		t.Fatalf("the skill file has no front matter:\n%.300s", skill)
	}
	if !strings.Contains(front, "\nversion: 1.2.3\n") || !strings.HasSuffix(front, "\ncontent_sha256: "+hash(body)) {
		t.Errorf("the skill file's front matter does not name its version and the hash of its body:\n%s", front)
	}
	if resp.Header.Get("ETag") != `"`+hash(skill)+`"` || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") {
		t.Errorf("skill.md headers: %v", resp.Header)
	}
	if r := fetch(t, s, mcp.SkillPath, http.Header{"If-None-Match": {resp.Header.Get("ETag")}}); r.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", r.StatusCode)
	}
	for tool := range mcp.ToolOps {
		if !strings.Contains(body, "`"+tool+"`") {
			t.Errorf("the skill file does not name the tool %s", tool)
		}
	}
	llms, _ := read(mcp.LLMsPath)
	parts := strings.SplitN(llms, "\n\n", 4)
	if len(parts) != 4 || parts[0] != "# sip" || !strings.HasPrefix(parts[1], "> ") {
		t.Fatalf("llms.txt does not start with its title and summary:\n%.300s", llms)
	}
	line, after := parts[2], parts[3]
	if line != "Version 1.2.3; content SHA-256 (of what follows this line) "+hash(after) {
		t.Errorf("llms.txt's version line: %q", line)
	}
	if !strings.Contains(llms, base+mcp.SkillPath) || !strings.Contains(llms, base+"/mcp") {
		t.Error("llms.txt does not link the skill file and the MCP endpoint")
	}
	for _, h := range registry.Handlers() {
		if !strings.Contains(body, "`"+h.Name+"`") || !strings.Contains(llms, "`"+h.Name+"`") {
			t.Errorf("the handler %s is missing from the skill file or llms.txt", h.Name)
		}
		if len(mcp.Flows[h.Name]) == 0 {
			t.Errorf("the handler %s has no flow", h.Name)
		}
		for _, tool := range mcp.Flows[h.Name] {
			if mcp.ToolOps[tool] == "" {
				t.Errorf("the flow of %s names the tool %s, which does not exist", h.Name, tool)
			}
		}
	}

	raw, _ := read(mcp.ServerJSONPath)
	var sj struct {
		Schema      string `json:"$schema"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Version     string `json:"version"`
		Remotes     []struct {
			Type, URL string
		} `json:"remotes"`
		Meta map[string]map[string]string `json:"_meta"`
	}
	if err := json.Unmarshal([]byte(raw), &sj); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^https://static\.modelcontextprotocol\.io/schemas/\d{4}-\d{2}-\d{2}/server\.schema\.json$`).MatchString(sj.Schema) ||
		!regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`).MatchString(sj.Name) || sj.Version != "1.2.3" ||
		len(sj.Description) == 0 || len(sj.Description) > 100 {
		t.Errorf("server.json: %+v", sj)
	}
	if len(sj.Remotes) != 1 || sj.Remotes[0].Type != "streamable-http" || sj.Remotes[0].URL != base+"/mcp" {
		t.Errorf("server.json remotes: %+v", sj.Remotes)
	}
	pp := sj.Meta["io.modelcontextprotocol.registry/publisher-provided"]
	if pp["skill_sha256"] != hash(body) || len(pp["tools_sha256"]) != 64 {
		t.Errorf("server.json's hashes: %v", pp)
	}
}
