package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SIPs of evaluations are resources (sip://evaluations/SIP-N, their
// Markdown), and so is the skill file. The list is the registry's at the
// time of asking, read through the API like everything else.
const (
	sipTemplate = "sip://evaluations/{ref}"
	skillURI    = "sip://skill.md"
)

func (s *Server) addResources(srv *sdk.Server) {
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: sipTemplate, Name: "sip",
		Title: "An evaluation's SIP", Description: "The SIP that defines an evaluation, as Markdown: SIP-N, N or the evaluation's id.",
		MIMEType: "text/markdown"}, s.readSIP)
	srv.AddResource(&sdk.Resource{URI: skillURI, Name: "skill.md", Title: "How an agent uses sip",
		Description: "The skill file: registration, the claim, each evaluation kind's calls, limits and errors.", MIMEType: "text/markdown"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			d := s.docs["/skill.md"]
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: skillURI, MIMEType: "text/markdown", Text: string(d.body)}}}, nil
		})
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			list, _ := res.(*sdk.ListResourcesResult)
			if list == nil {
				return res, nil
			}
			sips, err := s.listSIPs(ctx)
			if err != nil {
				return nil, err
			}
			list.Resources = append(list.Resources, sips...)
			return list, nil
		}
	})
}

// get reads an endpoint of the API anonymously, in process.
func (s *Server) get(ctx context.Context, path string) (int, []byte) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return http.StatusBadRequest, nil
	}
	r.Header.Set("Accept", "application/json")
	rec := newRecorder()
	s.api.ServeHTTP(rec, r)
	return rec.code, rec.body.Bytes()
}

func (s *Server) listSIPs(ctx context.Context) ([]*sdk.Resource, error) {
	code, body := s.get(ctx, "/api/v1/evaluations?status=all")
	if code != http.StatusOK {
		return nil, errUnavailable
	}
	var list struct {
		Evaluations []struct {
			ID          string `json:"id"`
			SIP         int    `json:"sip"`
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"evaluations"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	out := make([]*sdk.Resource, 0, len(list.Evaluations))
	for _, e := range list.Evaluations {
		n := "SIP-" + strconv.Itoa(e.SIP)
		out = append(out, &sdk.Resource{URI: "sip://evaluations/" + n, Name: n, Title: n + ": " + e.Name,
			Description: e.Description, MIMEType: "text/markdown"})
	}
	return out, nil
}

func (s *Server) readSIP(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	ref, ok := strings.CutPrefix(uri, "sip://evaluations/")
	if !ok || !safeSegment(ref) {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	code, body := s.get(ctx, "/api/v1/evaluations/"+url.PathEscape(ref))
	if code == http.StatusNotFound {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	if code != http.StatusOK {
		return nil, errUnavailable
	}
	var d struct {
		Evaluation struct {
			SIP          int    `json:"sip"`
			Name         string `json:"name"`
			Version      string `json:"version"`
			BodyMarkdown string `json:"body_markdown"`
		} `json:"evaluation"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, err
	}
	e := d.Evaluation
	text := "# SIP-" + strconv.Itoa(e.SIP) + ": " + e.Name + " (version " + e.Version + ")\n\n" + e.BodyMarkdown
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
}

var errUnavailable = &jsonrpc.Error{Code: -32603, Message: "the registry is unavailable; try again shortly"}
