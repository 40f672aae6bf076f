package evaluation

import (
	"context"
	"errors"

	"github.com/sipregistry/sip/registry"
)

// ChallengeByID returns a challenge to anyone who names it, while it is
// neither used nor expired: the id (80 random bits) is the capability, as
// in clients that fetch a challenge without their key (SafeMolt's vetting
// flow). The rules are Challenge's.
func (s *Service) ChallengeByID(ctx context.Context, id string) (*Challenge, error) {
	ch, err := s.challenges.Challenge(ctx, id)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, notFound("no such challenge", "Start the evaluation to get a challenge.")
	}
	if err != nil {
		return nil, err
	}
	return s.Challenge(ctx, ch.AgentID, id)
}

// HoldsAll reports whether the agent holds a valid pass of each of the
// evaluations (ValidPasses: evidenced, unexpired, unrevoked).
func (s *Service) HoldsAll(ctx context.Context, agentID string, evaluationIDs ...string) (bool, error) {
	passes, err := s.ValidPasses(ctx, agentID)
	if err != nil {
		return false, err
	}
	for _, id := range evaluationIDs {
		if passes[id] == nil {
			return false, nil
		}
	}
	return true, nil
}
