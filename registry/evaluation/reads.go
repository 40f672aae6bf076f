package evaluation

import (
	"context"
	"errors"
	"slices"

	"github.com/sipregistry/sip/registry"
)

// What agents, results, jobs and sessions the doors read, through the
// service, with the visibility rule (registry.CanSee) applied where a
// read shows one agent's results to another.

// agentLookup is what reading agents needs of their storage.
type agentLookup interface {
	AgentByKeyID(ctx context.Context, keyID string) (*registry.Agent, error)
	AgentByName(ctx context.Context, name string) (*registry.Agent, error)
	AgentNames(ctx context.Context, ids []string) (map[string]string, error)
	PublicAgentNames(ctx context.Context, ids []string) (map[string]string, error)
	PublicAgents(ctx context.Context) ([]registry.AgentCard, error)
}

// Serves says what the service can back: agents; attempts and results;
// judging jobs; multi-agent sessions (each needs its store).
type Serves struct {
	Agents, Results, Jobs, Sessions bool
}

// Serves reports what this service can back.
func (s *Service) Serves() Serves {
	results := s.agents != nil && s.keepsAttempts()
	return Serves{Agents: s.agents != nil, Results: results, Jobs: results && s.keepsJobs(), Sessions: results && s.keepsSessions()}
}

// keepsJobs reports whether the service keeps judging jobs: evaluations
// graded by the judge or a proctor need them.
func (s *Service) keepsJobs() bool { return s.jobs != nil && s.judging != nil }

// keepsSessions reports whether the service keeps multi-agent sessions:
// proctored and live evaluations, and proctors grading benchmarks, need
// them.
func (s *Service) keepsSessions() bool {
	return s.sessions != nil && s.messages != nil && s.proctorStore != nil && s.seats != nil
}

// keepsAttempts reports whether the service has every store taking an
// evaluation needs (Jobs and Sessions aside).
func (s *Service) keepsAttempts() bool {
	return s.defs.store != nil && s.attempts != nil && s.challenges != nil && s.results != nil && s.revocations != nil && s.presented != nil
}

// AgentByKeyID finds the agent whose API key has the public id keyID;
// the caller compares the whole key with its hash.
func (s *Service) AgentByKeyID(ctx context.Context, keyID string) (*registry.Agent, error) {
	return s.agents.AgentByKeyID(ctx, keyID)
}

// Agent reads an agent by id.
func (s *Service) Agent(ctx context.Context, id string) (*registry.Agent, error) {
	return s.agents.AgentByID(ctx, id)
}

// AgentNamed reads an agent by name (ignoring case).
func (s *Service) AgentNamed(ctx context.Context, name string) (*registry.Agent, error) {
	return s.agents.AgentByName(ctx, name)
}

// Points are the agent's points: what its first pass of each evaluation
// earned. They decode into what it passed: show them as CanSee allows.
func (s *Service) Points(ctx context.Context, agentID string) (float64, error) {
	return s.results.AgentPoints(ctx, agentID)
}

// AgentNames names agents by id, for lists of results already filtered
// by visibility.
func (s *Service) AgentNames(ctx context.Context, ids []string) (map[string]string, error) {
	return s.agents.AgentNames(ctx, ids)
}

// PublicAgentNames names those of ids whose names anyone may see
// (CanSee(“”, agent, SeeName), in the store's SQL).
func (s *Service) PublicAgentNames(ctx context.Context, ids []string) (map[string]string, error) {
	return s.agents.PublicAgentNames(ctx, ids)
}

// PublicAgents lists every agent anyone may see, for search and the
// directory.
func (s *Service) PublicAgents(ctx context.Context) ([]registry.AgentCard, error) {
	return s.agents.PublicAgents(ctx)
}

// Result reads a result by id, whoever's it is: for rules that decide on
// it (a job's result), not for showing it; VisibleResult shows.
func (s *Service) Result(ctx context.Context, id string) (*Result, error) {
	return s.results.Result(ctx, id)
}

// VisibleResult reads a result as viewerID ("" for anyone) may see it:
// an agent's own, or one of an agent that keeps its results public; any
// other is not found, as if it did not exist. It returns the result's
// agent too.
func (s *Service) VisibleResult(ctx context.Context, viewerID, id string) (*Result, *registry.Agent, error) {
	missing := notFound("no such result", "Check the result id.")
	r, err := s.results.Result(ctx, id)
	if errors.Is(err, registry.ErrNotFound) {
		return nil, nil, missing
	}
	if err != nil {
		return nil, nil, err
	}
	a, err := s.agents.AgentByID(ctx, r.AgentID)
	if err != nil {
		return nil, nil, err
	}
	if !registry.CanSee(viewerID, a, registry.SeeResults) {
		return nil, nil, missing
	}
	if !registry.CanSee(viewerID, a, registry.SeeFeedback) {
		shown := *r
		shown.Details = withoutFeedback(r.Details)
		r = &shown
	}
	return r, a, nil
}

// FeedbackDetails are the keys of a result's details that are feedback on
// the attempt, which only the agent itself sees (registry.SeeFeedback):
// the judge's model, raw output, summary and per-item scores, and a
// proctor's feedback and per-question scores.
var FeedbackDetails = []string{"judge_model", "judge_raw", "summary", "scores", "proctor_feedback"}

// withoutFeedback is a copy of details without FeedbackDetails.
func withoutFeedback(details map[string]any) map[string]any {
	out := make(map[string]any, len(details))
	for k, v := range details {
		if !slices.Contains(FeedbackDetails, k) {
			out[k] = v
		}
	}
	return out
}

// Results lists results as f.Viewer may see them (the store applies
// CanSee in SQL), a page at a time.
func (s *Service) Results(ctx context.Context, f ResultFilter) ([]*Result, string, error) {
	return s.results.Results(ctx, f)
}

// PassCounts counts the visible passes of each evaluation.
func (s *Service) PassCounts(ctx context.Context) (map[string]int, error) {
	return s.results.PassCounts(ctx)
}

// Standings is the leaderboard of agents that keep results public.
func (s *Service) Standings(ctx context.Context, offset, limit int) ([]Standing, int, error) {
	return s.results.Standings(ctx, offset, limit)
}

// CredentialIndex is a passing result's index in the revocation status
// lists.
func (s *Service) CredentialIndex(ctx context.Context, resultID string) (int64, error) {
	return s.revocations.CredentialIndex(ctx, resultID)
}

// RevokedIndexes are the revoked credentials' indexes in [from, to).
func (s *Service) RevokedIndexes(ctx context.Context, from, to int64) ([]int64, error) {
	return s.revocations.RevokedIndexes(ctx, from, to)
}

// Job reads a judging job.
func (s *Service) Job(ctx context.Context, id string) (*Job, error) { return s.jobs.Job(ctx, id) }

// JobOf reads the judging job of a registration.
func (s *Service) JobOf(ctx context.Context, registrationID string) (*Job, error) {
	return s.jobs.JobByRegistration(ctx, registrationID)
}

// JobStats is the judging queue at a glance.
func (s *Service) JobStats(ctx context.Context) (JobStats, error) { return s.jobs.JobStats(ctx) }

// SessionOf reads the session a registration took part in.
func (s *Service) SessionOf(ctx context.Context, registrationID string) (*Session, error) {
	return s.sessions.SessionByRegistration(ctx, registrationID)
}
