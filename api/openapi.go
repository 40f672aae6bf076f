package api

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"
	"gopkg.in/yaml.v3"
)

// openAPIYAML is the API's contract, written by hand and checked by the
// tests: every response the tests see must match it.
//
//go:embed openapi.yaml
var openAPIYAML []byte

var (
	openAPIOnce sync.Once
	openAPIJSON []byte
	openAPIErr  error
)

// OpenAPI returns the OpenAPI 3 document as JSON.
func OpenAPI() ([]byte, error) {
	openAPIOnce.Do(func() {
		var doc any
		if openAPIErr = yaml.Unmarshal(openAPIYAML, &doc); openAPIErr == nil {
			openAPIJSON, openAPIErr = json.Marshal(doc)
		}
	})
	return openAPIJSON, openAPIErr
}

func (s *Server) openAPI(c echo.Context) error {
	doc, err := OpenAPI()
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.JSONBlob(http.StatusOK, doc)
}
