package api

import "github.com/sipregistry/sip/registry"

// canRun reports whether this server runs e's handler. Evaluations run by
// other handlers can be read but not taken yet.
func (s *Server) canRun(e *registry.Entry) bool {
	return s.serves.Results && s.runtime.Runnable(e.Handler)
}
