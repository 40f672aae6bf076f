package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

var jsonContentType = []string{echo.MIMEApplicationJSON}[:1:1] // capacity = length: see nosniff

// jsonBody answers 200 with a response kept per sync generation, with its
// length: the client reads it in one piece instead of chunks.
func jsonBody(c echo.Context, e *encoded) error {
	h := c.Response().Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = e.length
	c.Response().WriteHeader(http.StatusOK)
	_, err := c.Response().Write(e.body)
	return err
}
