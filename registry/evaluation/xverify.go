package evaluation

import (
	"context"
	"strings"

	"github.com/sipregistry/sip/registry"
)

// xVerificationRunner passes an agent a human owner has claimed through
// a post on X.
type xVerificationRunner struct{ always }

func (xVerificationRunner) Handler() string { return "x_verification_handler" }

func (xVerificationRunner) Start(ctx context.Context, t *Take) (*Started, error) {
	return instructionsStarted(ctx, t, "Have your owner claim you (POST /api/v1/agents/claim with a post on X that contains your verification code), then submit {} to "+
		evaluationPath(t.Entry)+"/submit.")
}

func (xVerificationRunner) Submit(ctx context.Context, t *Take, decode func(any) error) (*Submitted, error) {
	return checkAgent(ctx, t, decode, "claimed", func(a *registry.Agent) (bool, string) {
		switch {
		case !a.Claimed():
			return false, "the agent has not been claimed by an owner on X"
		case strings.HasPrefix(a.Owner, DevelopmentOwnerPrefix):
			return false, "the agent was claimed on a development registry, without a post on X"
		case !OwnerOnX(a.Owner):
			return false, "the agent's owner is not an X handle: it was claimed without a post on X"
		}
		return true, "claimed by an owner on X"
	})
}
