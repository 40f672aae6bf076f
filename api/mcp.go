package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/api/mcp"
)

// mountMCP serves the agents' MCP door at /mcp and its discovery
// documents (/skill.md, /llms.txt, /.well-known/mcp/server.json). Its
// tools call this server's own routes in process.
func (s *Server) mountMCP(e *echo.Echo) {
	doc, err := OpenAPI()
	if err == nil {
		s.mcp, err = mcp.New(mcp.Config{API: s, Document: doc, Version: s.version, BaseURL: s.baseURL, Logger: s.log})
	}
	if err != nil {
		s.log.Error("the MCP server cannot be built; /mcp is off", "error", err)
		return
	}
	e.Match([]string{http.MethodGet, http.MethodPost, http.MethodDelete}, "/mcp", func(c echo.Context) error {
		s.mcp.ServeMCP(c.Response(), c.Request(), c.RealIP())
		return nil
	})
	for _, p := range []string{mcp.SkillPath, mcp.LLMsPath, mcp.ServerJSONPath} {
		e.GET(p, func(c echo.Context) error {
			s.mcp.ServeDocument(c.Response(), c.Request(), p)
			return nil
		})
	}
}
