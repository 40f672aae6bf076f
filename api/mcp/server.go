// Package mcp is the agents' Model Context Protocol door to sip: an MCP
// server (Streamable HTTP, stateless) whose every tool is one operation of
// the HTTP API, called in process through the API's own router, so a tool
// call meets the same authentication, rate limits, strict decoding,
// evaluation service and error model as the HTTP call, and nothing is
// decided twice. Tool schemas come from the OpenAPI document; so do the
// skill file, llms.txt and the MCP registry's server.json it serves.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config is what the MCP server is built from.
type Config struct {
	// API is the HTTP API (its router) every tool calls in process.
	API http.Handler
	// Document is the OpenAPI document (JSON) the API serves.
	Document []byte
	// Version is sip's build version, reported to clients and in the
	// discovery documents.
	Version string
	// BaseURL is the public URL of the service ("" when unknown: links
	// are then paths).
	BaseURL string
	// Logger receives what the SDK logs.
	Logger *slog.Logger
}

// Server serves MCP at /mcp and the discovery documents.
type Server struct {
	sdk  *sdk.Server
	api  http.Handler
	http *sdk.StreamableHTTPHandler
	docs map[string]*discoveryDoc
}

// bound is a tool with the operation it calls.
type bound struct {
	tool
	op     *operation
	params map[string]parameter // path and query parameters by argument name
	fields map[string]bool      // body fields that are arguments of their own
}

// clientHeader carries, from the /mcp request to the tools, the client
// address the API's router saw, so the calls the tools make are counted
// against the same rate limits as the client's HTTP calls. Whatever a
// client sends in it is dropped.
const clientHeader = "X-Sip-Mcp-Client"

// MaxBody is the largest /mcp request read (the API's own limit).
const MaxBody = 1 << 20

// New builds the MCP server from the OpenAPI document.
func New(cfg Config) (*Server, error) {
	doc, err := parseDocument(cfg.Document)
	if err != nil {
		return nil, err
	}
	ops, err := doc.operations()
	if err != nil {
		return nil, err
	}
	s := &Server{api: cfg.API}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "sip", Title: "sip: evaluations of AI agents", Version: cfg.Version},
		&sdk.ServerOptions{Instructions: instructions, Logger: log})
	for _, t := range tools {
		op := ops[t.op]
		if op == nil {
			return nil, fmt.Errorf("tool %s: the OpenAPI document has no operation %s", t.name, t.op)
		}
		b, in, out, err := bind(t, op)
		if err != nil {
			return nil, err
		}
		srv.AddTool(&sdk.Tool{Name: t.name, Title: op.Summary, Description: b.description(),
			InputSchema: in, OutputSchema: out,
			Annotations: &sdk.ToolAnnotations{Title: op.Summary, ReadOnlyHint: t.readOnly, DestructiveHint: &t.destructive,
				IdempotentHint: t.idempotent, OpenWorldHint: new(false)}},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return s.call(ctx, b, req), nil
			})
	}
	s.sdk = srv
	s.addResources(srv)
	if s.docs, err = discovery(doc, ops, cfg); err != nil {
		return nil, err
	}
	s.http = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		// Stateless: no session lives on the server, so a replica
		// behind a load balancer answers any call, memory does not grow
		// with clients, and a session id replayed by someone else
		// carries nothing: every call is authorised by its own key.
		Stateless:           true,
		JSONResponse:        true,
		Logger:              log,
		MaxRequestBodyBytes: MaxBody,
		// Behind a proxy on the same host the Host header is the public
		// name; every call that acts for an agent needs its key anyway.
		DisableLocalhostProtection: !loopback(cfg.BaseURL),
	})
	return s, nil
}

func loopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return true
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

const instructions = "sip runs evaluations of AI agents defined by SIPs. " +
	"Register once with register_agent (no key needed) and send the api_key it returns as Authorization: Bearer <api_key>. " +
	"Then list_evaluations, start_evaluation (register: true registers you first; or register_for_evaluation before it), and submit_evaluation in the shape start's kind names. " +
	"Errors are the HTTP API's: error_detail.code and a hint say what to do. The skill file at /skill.md says more."

// ServeMCP answers a request to /mcp; clientIP is the address the API's
// router attributes the request to.
func (s *Server) ServeMCP(w http.ResponseWriter, r *http.Request, clientIP string) {
	r.Header.Del(clientHeader)
	r.Header.Set(clientHeader, clientIP)
	s.http.ServeHTTP(w, r)
}

// bind resolves a tool's arguments against its operation and builds its
// input and output schemas.
func bind(t tool, op *operation) (*bound, map[string]any, map[string]any, error) {
	b := &bound{tool: t, op: op, params: map[string]parameter{}, fields: map[string]bool{}}
	props := map[string]any{}
	var required []string
	for _, p := range op.Params {
		sch, _ := p.Schema.(map[string]any)
		sch = clone(sch)
		if p.Description != "" {
			sch["description"] = p.Description
		}
		if p.In == "path" {
			sch["minLength"], sch["maxLength"] = 1, maxSegment
		}
		props[p.Name] = sch
		b.params[p.Name] = p
		if p.Required {
			required = append(required, p.Name)
		}
	}
	if op.Body != nil {
		bs, _ := op.Body.(map[string]any)
		if t.body != "" {
			props[t.body] = bs
			required = append(required, t.body)
		} else {
			bp, ok := bs["properties"].(map[string]any)
			if !ok {
				return nil, nil, nil, fmt.Errorf("tool %s: the body of %s has no fields of its own: name the argument it goes in", t.name, op.ID)
			}
			for name, sch := range bp {
				if _, dup := props[name]; dup {
					return nil, nil, nil, fmt.Errorf("tool %s: body field %s is also a parameter", t.name, name)
				}
				props[name] = sch
				b.fields[name] = true
			}
			if req, ok := bs["required"].([]any); ok {
				for _, r := range req {
					required = append(required, r.(string))
				}
			}
		}
	}
	slices.Sort(required)
	in := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		in["required"] = required
	}
	var out map[string]any
	switch len(op.Responses) {
	case 0:
	case 1:
		out, _ = op.Responses[0].(map[string]any)
	default:
		out = map[string]any{"type": "object", "oneOf": op.Responses}
	}
	if out != nil {
		if _, ok := out["type"]; !ok {
			out = clone(out)
			out["type"] = "object"
		}
	}
	return b, in, out, nil
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+3)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (b *bound) description() string {
	d := b.op.Summary + "."
	if b.op.Description != "" {
		d += " " + b.op.Description
	}
	if b.note != "" {
		d += "\n\n" + b.note
	}
	if b.op.Public {
		d += "\n\nThe same as " + b.op.Method + " " + b.op.Path + " of the HTTP API; needs no key."
	} else {
		d += "\n\nThe same as " + b.op.Method + " " + b.op.Path + " of the HTTP API, with your API key as a bearer token."
	}
	return d
}

// maxSegment bounds a path argument (an id or a SIP reference).
const maxSegment = 200

// call makes the tool's HTTP call in process and turns the answer into
// the tool's result: the response body as structured content (and as
// text, for clients that read only text), or, for a refusal, the API's
// error body as text with isError set.
func (s *Server) call(ctx context.Context, b *bound, req *sdk.CallToolRequest) *sdk.CallToolResult {
	var args map[string]json.RawMessage
	if raw := req.Params.Arguments; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return refusal("validation_failed", "", "the arguments must be a JSON object", "Send the arguments as an object, as the tool's input schema says.")
		}
	}
	path := b.op.Path
	query := url.Values{}
	body := map[string]json.RawMessage{}
	var whole json.RawMessage
	for name, raw := range args {
		p, isParam := b.params[name]
		switch {
		case isParam:
			v, ok := scalar(raw)
			if !ok {
				return refusal("validation_failed", name, name+" must be a string or a number", "Check the argument against the tool's input schema.")
			}
			if p.In == "path" {
				if !safeSegment(v) {
					return refusal("validation_failed", name, name+" is not a valid id", "Send the id as the API gave it.")
				}
				path = strings.Replace(path, "{"+name+"}", url.PathEscape(v), 1)
			} else {
				query.Set(name, v)
			}
		case name == b.body && b.body != "":
			whole = raw
		case b.fields[name]:
			body[name] = raw
		default:
			return refusal("validation_failed", name, "unknown argument "+strconv.Quote(name), "Send only the arguments of the tool's input schema.")
		}
	}
	for name, p := range b.params {
		if p.In == "path" && strings.Contains(path, "{"+name+"}") {
			return refusal("validation_failed", name, "missing argument "+strconv.Quote(name), "Send every required argument of the tool's input schema.")
		}
	}
	var payload []byte
	switch {
	case whole != nil:
		payload = whole
	case len(body) > 0:
		payload, _ = json.Marshal(body)
	case b.op.Body != nil && b.body == "":
		payload = []byte("{}") // the fields are all optional; the API reads {}
	}
	if b.body != "" && whole == nil {
		return refusal("validation_failed", b.body, "missing argument "+strconv.Quote(b.body), "Send every required argument of the tool's input schema.")
	}
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	hr, err := http.NewRequestWithContext(ctx, b.op.Method, target, bytes.NewReader(payload))
	if err != nil {
		return refusal("validation_failed", "", "the arguments do not make a request", "Check the arguments against the tool's input schema.")
	}
	if payload != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.Header.Set("Accept", "application/json")
	if h := req.Extra; h != nil && h.Header != nil {
		if a := h.Header.Get("Authorization"); a != "" {
			hr.Header.Set("Authorization", a)
		}
		if id := h.Header.Get("X-Request-Id"); id != "" {
			hr.Header.Set("X-Request-Id", id)
		}
		if ip := h.Header.Get(clientHeader); ip != "" {
			hr.RemoteAddr = net.JoinHostPort(ip, "0")
		}
	}
	rec := newRecorder()
	s.api.ServeHTTP(rec, hr)
	out := rec.body.Bytes()
	if rec.code >= 300 {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(out)}}}
	}
	if !json.Valid(out) {
		return refusal("internal", "", "the API answered with something that is not JSON", "Report it.")
	}
	return &sdk.CallToolResult{StructuredContent: json.RawMessage(out), Content: []sdk.Content{&sdk.TextContent{Text: string(out)}}}
}

// scalar reads an argument that goes in a path or a query.
func scalar(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&n) == nil {
		return n.String(), true
	}
	return "", false
}

// safeSegment reports whether an argument may stand as one path segment:
// escaped, it could not leave its place anyway; refusing dot segments and
// oddities here keeps the refusal the caller sees a plain one.
func safeSegment(v string) bool {
	if v == "" || len(v) > maxSegment || v == "." || v == ".." {
		return false
	}
	return !strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f || strings.ContainsRune("/\\?#%", r) })
}

// refusal is an error found before the API was called, in the API's
// error shape.
func refusal(code, field, msg, hint string) *sdk.CallToolResult {
	type detail struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
		Field   string `json:"field,omitempty"`
	}
	body, _ := json.Marshal(struct {
		Success     bool   `json:"success"`
		Error       string `json:"error"`
		Hint        string `json:"hint"`
		ErrorDetail detail `json:"error_detail"`
		RequestID   string `json:"request_id"`
	}{false, msg, hint, detail{code, msg, hint, field}, ""})
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(body)}}}
}

// recorder keeps the API's answer to a call made in process.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}, code: http.StatusOK} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

func (r *recorder) WriteHeader(code int) { r.code = code }

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
