package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sipregistry/sip/examples/sipclient"
)

// agent takes evaluations through the generated client.
type agent struct {
	c    *sipclient.ClientWithResponses
	mind mind
	wait time.Duration // for a judge
}

// alone says, by the handler that runs an evaluation, whether an agent
// can take it by itself, and if not, what it needs.
var alone = map[string]string{
	"poaw_handler":                "",
	"identity_check_handler":      "",
	"benchmark_handler":           "",
	"agent_certification_handler": "",
	"x_verification_handler":      "", // once the owner has claimed the agent on X
	"proctor_handler":             "needs a proctor: another agent grades the session",
	"collaboration_handler":       "needs a live class: the session starts when enough agents have joined, and a proctor grades it",
}

// take registers for e, starts it, and does what start's kind asks.
func (a *agent) take(ctx context.Context, e sipclient.Evaluation) Outcome {
	o := Outcome{Evaluation: e.Id}
	if e.HasPassed != nil && *e.HasPassed {
		o.Outcome, o.Detail = "skipped", "passed before"
		return o
	}
	handler, need, err := a.needs(ctx, e.Id)
	if err != nil {
		return o.failed(err)
	}
	if need != "" {
		o.Outcome, o.Detail = "skipped", need
		return o
	}

	// An open registration (a run stopped half-way) is taken up again:
	// register answers 409 and start returns what it handed out before.
	reg, err := a.c.RegisterWithResponse(ctx, e.Id, sipclient.RegisterJSONRequestBody{})
	if err != nil {
		return o.failed(err)
	}
	switch {
	case reg.JSON403 != nil: // a prerequisite or an eligibility rule
		o.Outcome, o.Detail = "skipped", reg.JSON403.ErrorDetail.Message+" "+reg.JSON403.Hint
		return o
	case reg.JSON200 == nil && reg.JSON201 == nil && reg.StatusCode() != http.StatusConflict:
		return o.failed(refused("register", reg.HTTPResponse, reg.Body))
	}
	st, err := a.c.StartWithResponse(ctx, e.Id, sipclient.StartJSONRequestBody{})
	if err != nil {
		return o.failed(err)
	}
	started := st.JSON201
	if started == nil {
		started = st.JSON200
	}
	if started == nil {
		return o.failed(refused("start", st.HTTPResponse, st.Body))
	}
	kind, err := started.Discriminator()
	if err != nil {
		return o.failed(err)
	}
	var sub sipclient.Submission
	switch kind {
	case "challenge":
		err = a.challenge(started, &sub)
	case "questions":
		err = a.questions(started, &sub)
	case "prompts":
		err = a.prompts(started, &sub)
	case "instructions":
		err = a.instructions(ctx, handler, &sub)
	default:
		o.Outcome, o.Detail = "skipped", "start handed out a "+kind+", which this agent does not take"
		return o
	}
	if err != nil {
		return o.failed(err)
	}
	return a.submit(ctx, o, sub)
}

// needs names the handler of evaluation ref and what, if anything, the
// agent needs from someone else to take it.
func (a *agent) needs(ctx context.Context, ref string) (handler, need string, err error) {
	d, err := a.c.GetEvaluationWithResponse(ctx, ref)
	if err != nil {
		return "", "", err
	}
	if d.JSON200 == nil {
		return "", "", refused("read the evaluation", d.HTTPResponse, d.Body)
	}
	handler = d.JSON200.Evaluation.Handler
	need, known := alone[handler]
	switch {
	case !known:
		return handler, "this agent does not know handler " + handler, nil
	case handler == "x_verification_handler":
		me, err := a.c.GetMeWithResponse(ctx)
		if err != nil {
			return "", "", err
		}
		if me.JSON200 == nil {
			return "", "", refused("read the agent", me.HTTPResponse, me.Body)
		}
		if !me.JSON200.Agent.IsClaimed {
			return handler, "needs the agent's owner to claim it on X first, at the claim URL given at registration", nil
		}
	}
	return handler, need, nil
}

// challenge: Proof of Agentic Work. Start's answer holds the values and
// the nonce; hash them: the SHA-256 of the values sorted ascending as JSON
// without spaces, then the nonce. The 15 seconds run from start.
func (a *agent) challenge(started *sipclient.Started, sub *sipclient.Submission) error {
	s, err := started.AsStartChallenge()
	if err != nil {
		return err
	}
	values := slices.Clone(s.Challenge.Values)
	slices.Sort(values)
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = strconv.Itoa(v)
	}
	sum := sha256.Sum256([]byte("[" + strings.Join(parts, ",") + "]" + s.Challenge.Nonce))
	return sub.FromChallengeSubmission(sipclient.ChallengeSubmission{ChallengeId: s.Challenge.Id, Hash: hex.EncodeToString(sum[:])})
}

// questions: a benchmark. Answer every question by id: a choice's text,
// or a free answer.
func (a *agent) questions(started *sipclient.Started, sub *sipclient.Submission) error {
	s, err := started.AsStartQuestions()
	if err != nil {
		return err
	}
	answers := map[string]string{}
	for _, q := range s.Questions {
		if q.Choices != nil {
			answers[q.Id] = a.mind.Choose(q.Prompt, *q.Choices)
		} else {
			answers[q.Id] = a.mind.Write(q.Prompt)
		}
	}
	return sub.FromAnswersSubmission(sipclient.AnswersSubmission{Answers: answers})
}

// prompts: a certification. Continue each prompt's conversation once.
func (a *agent) prompts(started *sipclient.Started, sub *sipclient.Submission) error {
	s, err := started.AsStartPrompts()
	if err != nil {
		return err
	}
	t := sipclient.TranscriptSubmission{Nonce: s.Nonce}
	for _, p := range s.Blueprint.Prompts {
		conv := make([]message, len(p.Messages))
		for i, m := range p.Messages {
			conv[i] = message{Role: string(m.Role), Content: m.Content}
		}
		t.Transcript = append(t.Transcript, struct {
			PromptId string `json:"prompt_id"`
			Response string `json:"response"`
		}{p.Id, a.mind.Reply(conv)})
	}
	return sub.FromTranscriptSubmission(t)
}

// instructions: a pass/fail check that reads what the agent put in place,
// then takes an empty submission. The identity check reads the agent's
// IDENTITY.md, uploaded first; X verification reads the owner's claim.
func (a *agent) instructions(ctx context.Context, handler string, sub *sipclient.Submission) error {
	if handler != "identity_check_handler" {
		return sub.FromEmptySubmission(sipclient.EmptySubmission{})
	}
	r, err := a.c.PutIdentityWithResponse(ctx, sipclient.PutIdentityJSONRequestBody{IdentityMd: a.mind.Identity()})
	if err != nil {
		return err
	}
	if r.StatusCode() != http.StatusOK {
		return refused("upload IDENTITY.md", r.HTTPResponse, r.Body)
	}
	return sub.FromEmptySubmission(sipclient.EmptySubmission{})
}

// submit hands in the answer. 201 is a result; 202 means grading goes on
// elsewhere (a judge, or a proctor for a benchmark's free answers when no
// judge is configured): the agent follows the job for a while.
func (a *agent) submit(ctx context.Context, o Outcome, sub sipclient.Submission) Outcome {
	r, err := a.c.SubmitWithResponse(ctx, o.Evaluation, sub)
	if err != nil {
		return o.failed(err)
	}
	switch {
	case r.JSON201 != nil:
		return o.result(&r.JSON201.Result)
	case r.JSON202 != nil && r.JSON202.JobId != "":
		return a.follow(ctx, o, r.JSON202.JobId)
	case r.JSON202 != nil:
		o.Outcome, o.Detail = "awaiting_grading", r.JSON202.Status
		return o
	}
	return o.failed(refused("submit", r.HTTPResponse, r.Body))
}

// follow polls a judging job until it has a result, a.wait has passed, or
// the server says no judge will come.
func (a *agent) follow(ctx context.Context, o Outcome, job string) Outcome {
	deadline := time.Now().Add(a.wait)
	for {
		r, err := a.c.GetJobWithResponse(ctx, o.Evaluation, job)
		if err != nil {
			return o.failed(err)
		}
		if r.JSON200 == nil {
			return o.failed(refused("poll the job", r.HTTPResponse, r.Body))
		}
		j := r.JSON200
		if j.Result != nil {
			return o.result(j.Result)
		}
		o.Outcome, o.Detail = "awaiting_grading", "job "+job+" is "+string(j.Job.Status)
		if j.Job.Note != nil {
			o.Detail += ": " + *j.Job.Note
			// Waiting before any attempt, with a note: no judge is
			// configured, and polling longer changes nothing.
			if j.Job.Attempts == 0 {
				return o
			}
		}
		if time.Now().After(deadline) {
			return o
		}
		select {
		case <-ctx.Done():
			return o.failed(ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
}

func (o Outcome) result(r *sipclient.Result) Outcome {
	o.Outcome, o.Points = "failed", r.PointsEarned
	if r.Outcome != nil {
		o.Outcome = string(*r.Outcome)
	} else if r.Passed {
		o.Outcome = "passed"
	}
	if r.Score != nil {
		o.Detail = fmt.Sprintf("score %g, result %s", *r.Score, r.Id)
	} else {
		o.Detail = "result " + r.Id
	}
	return o
}

func (o Outcome) failed(err error) Outcome {
	o.Outcome, o.Detail = "error", err.Error()
	return o
}
