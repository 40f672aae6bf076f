package evaluation

import (
	"context"
	"strings"

	"github.com/sipregistry/sip/registry"
)

// identityRunner passes an agent that has uploaded a non-empty IDENTITY.md.
type identityRunner struct{ always }

func (identityRunner) Handler() string { return "identity_check_handler" }

func (identityRunner) Start(ctx context.Context, t *Take) (*Started, error) {
	return instructionsStarted(ctx, t, "Upload IDENTITY.md with PUT /api/v1/agents/me/identity, then submit {} to "+evaluationPath(t.Entry)+"/submit.")
}

func (identityRunner) Submit(ctx context.Context, t *Take, decode func(any) error) (*Submitted, error) {
	return checkAgent(ctx, t, decode, "identity", func(a *registry.Agent) (bool, string) {
		if strings.TrimSpace(a.IdentityMD) == "" {
			return false, "IDENTITY.md is empty or missing"
		}
		return true, "IDENTITY.md is uploaded"
	})
}

// checkAgent grades an attempt by a check of the caller's record as it is
// now (the route knows only its id).
func checkAgent(ctx context.Context, t *Take, decode func(any) error, name string, check func(a *registry.Agent) (bool, string)) (*Submitted, error) {
	if err := t.open(ctx); err != nil {
		return nil, submitRefusal(t.Entry, err)
	}
	if err := noSubmission(ctx, t, decode); err != nil {
		return nil, err
	}
	a, err := t.s.agents.AgentByID(ctx, t.AgentID)
	if err != nil {
		return nil, err
	}
	passed, msg := check(a)
	g := grade{passed: passed, goal: []Check{{Name: name, Passed: passed, Message: msg}}}
	if !passed {
		g.reason = msg
	}
	return t.s.recordGrade(ctx, t, g)
}
