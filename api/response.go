package api

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

var jsonContentType = []string{echo.MIMEApplicationJSON}[:1:1] // capacity = length: see nosniff

// jsonBody answers 200 with body, JSON encoded before (a response kept per
// sync generation), with its length: the client reads it in one piece
// instead of chunks.
func jsonBody(c echo.Context, body []byte) error {
	h := c.Response().Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	c.Response().WriteHeader(http.StatusOK)
	_, err := c.Response().Write(body)
	return err
}
