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
	sips := sipsNow{s: s}
	if r, err = sips.shown(ctx, viewerID, r, a); err != nil {
		return nil, nil, err
	}
	return r, a, nil
}

// sipsNow reads the SIPs of the results one read shows, once each, as the
// registry holds them now.
type sipsNow struct {
	s *Service
	m map[string]*registry.SIP
}

func (n *sipsNow) sip(ctx context.Context, id string) (*registry.SIP, error) {
	if s, ok := n.m[id]; ok {
		return s, nil
	}
	// The current version is the newest row: a sync adds one whenever
	// the content changes, and never changes or deletes one.
	versions, err := n.s.defs.store.Versions(ctx, id)
	if errors.Is(err, registry.ErrNotFound) || err == nil && len(versions) == 0 {
		// A result of an evaluation the registry does not hold (imported
		// from another registry): nothing says its scores are public.
		hidden := &registry.SIP{ID: id, Config: registry.Config{Reveal: registry.RevealPassFail}}
		if n.m == nil {
			n.m = map[string]*registry.SIP{}
		}
		n.m[id] = hidden
		return hidden, nil
	}
	if err != nil {
		return nil, err
	}
	def, err := n.s.defs.pinned(ctx, id, versions[len(versions)-1].ID, nil)
	if err != nil {
		return nil, err
	}
	if n.m == nil {
		n.m = map[string]*registry.SIP{}
	}
	n.m[id] = &def.SIP
	return &def.SIP, nil
}

// shown is r as viewerID may see its score (registry.CanSeeScore, for the
// SIP as it is now): where it may not, a copy without the score, the
// maximum, the per-item grades and feedback, the goal's checks, and a
// reason written from the score, as conceal records an attempt that did
// not pass. a is the result's agent.
func (n *sipsNow) shown(ctx context.Context, viewerID string, r *Result, a *registry.Agent) (*Result, error) {
	sip, err := n.sip(ctx, r.EvaluationID)
	if err != nil {
		return nil, err
	}
	if registry.CanSeeScore(viewerID, a, sip, r.Passed) {
		return r, nil
	}
	out := *r
	out.Score, out.MaxScore = nil, nil
	out.Details = map[string]any{}
	// Where the attempt was graded stays: it says nothing of a score.
	for _, k := range append([]string{"session_id", "proctor_agent_id"}, ProvenanceDetails...) {
		if v, ok := r.Details[k]; ok {
			out.Details[k] = v
		}
	}
	if reason, ok := r.Details["reason"]; ok {
		switch {
		case sip.EffectiveReveal() == registry.RevealNone:
			out.Details["reason"] = "did not pass"
		case r.Outcome == OutcomeFailed && r.Score != nil:
			out.Details["reason"] = "below the passing score"
		default:
			out.Details["reason"] = reason
		}
	}
	out.Trace.Gates = make([]Gate, len(r.Trace.Gates))
	for i, g := range r.Trace.Gates {
		if g.Gate == 4 || g.Gate == 3 && sip.EffectiveReveal() == registry.RevealNone {
			// A gate's detail is its first failed check's message.
			g.Checks = nil
			if !g.Passed {
				g.Detail = ""
			}
		}
		out.Trace.Gates[i] = g
	}
	return &out, nil
}

// FeedbackDetails are the keys of a result's details that are feedback on
// the attempt, which only the agent itself sees (registry.SeeFeedback):
// the judge's model, raw output, summary and per-item scores, a
// proctor's feedback and per-question scores, and the record an imported
// result kept from its source (SafeMolt's result_data, where its handlers
// wrote the proctor's feedback and the judge's output).
var FeedbackDetails = []string{"judge_model", "judge_raw", "summary", "scores", "proctor_feedback", "result_data"}

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
	rs, next, err := s.results.Results(ctx, f)
	if err != nil {
		return nil, "", err
	}
	sips := sipsNow{s: s}
	for i, r := range rs {
		// Only the viewer's own results can show a score it may see and
		// others may not: the agent is needed to tell which.
		var a *registry.Agent
		if f.Viewer != "" && r.AgentID == f.Viewer {
			a = &registry.Agent{ID: r.AgentID}
		}
		if rs[i], err = sips.shown(ctx, f.Viewer, r, a); err != nil {
			return nil, "", err
		}
	}
	return rs, next, nil
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
