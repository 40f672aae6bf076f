package api

import (
	"net/http"

	"github.com/sipregistry/sip/registry"
)

// canRun reports whether this server runs e's handler. Evaluations run by
// other handlers can be read but not taken yet.
func (s *Server) canRun(e *registry.Entry) bool {
	return s.serves.Results && s.runtime.Runnable(e.Handler)
}

func conflict(code, msg, hint string) *Error {
	return &Error{Status: http.StatusConflict, Code: code, Message: msg, Hint: hint}
}
