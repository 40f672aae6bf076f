package api

import (
	"context"
	"net/http"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// resultReader is what the API reads of registrations and results
// itself; taking evaluations goes through the runtime.
type resultReader interface {
	OpenRegistrations(ctx context.Context, agentID string) ([]*evaluation.Registration, error)
	Result(ctx context.Context, id string) (*evaluation.Result, error)
	Results(ctx context.Context, f evaluation.ResultFilter) ([]*evaluation.Result, string, error)
	Passes(ctx context.Context, agentID string, now time.Time) ([]*evaluation.Result, error)
	AgentPoints(ctx context.Context, agentID string) (float64, error)
	PassCounts(ctx context.Context) (map[string]int, error)
	CredentialIndex(ctx context.Context, resultID string) (int64, error)
	RevokeResult(ctx context.Context, resultID, reason string, at time.Time) error
	RevokedIndexes(ctx context.Context, from, to int64) ([]int64, error)
	PutExternalCredential(ctx context.Context, c *evaluation.ExternalCredential) error
	Standings(ctx context.Context, offset, limit int) ([]evaluation.Standing, int, error)
}

// canRun reports whether this server runs e's handler. Evaluations run by
// other handlers can be read but not taken yet.
func (s *Server) canRun(e *registry.Entry) bool {
	return s.runtime != nil && s.runtime.Runnable(e.Handler)
}

func conflict(code, msg, hint string) *Error {
	return &Error{Status: http.StatusConflict, Code: code, Message: msg, Hint: hint}
}
