package evaluation

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sipregistry/sip/registry"
)

// benchmarkRunner runs benchmarks: multiple-choice answers are graded at
// once; free-response answers go to the judge, or to a proctor when no
// judge is configured.
type benchmarkRunner struct{}

func (benchmarkRunner) Handler() string { return "benchmark_handler" }

func (benchmarkRunner) Runs(s *Service) bool { return s.keepsJobs() }

// MaxAnswer caps one free-text answer or response.
const MaxAnswer = 16 << 10

// BenchmarkSubmission is a benchmark's answers by question id; a
// multiple-choice answer is the text of the choice.
type BenchmarkSubmission struct {
	Answers map[string]string `json:"answers"`
}

// benchmarkPartial is what the server graded itself before judging.
type benchmarkPartial struct {
	ChoicePoints float64 `json:"choice_points"`
	TotalPoints  float64 `json:"total_points"`
}

func benchmarkDeadline(def *Definition, started time.Time) time.Time {
	return started.Add(time.Duration(def.Config.Benchmark.TimeLimitMinutes) * time.Minute)
}

func (benchmarkRunner) Start(ctx context.Context, t *Take) (*Started, error) {
	if err := t.open(ctx); err != nil {
		return nil, err
	}
	cfg, err := t.s.questions(t.Def, t.Reg.ID)
	if err != nil {
		return nil, err
	}
	moved, err := t.s.moveToStarted(ctx, t.Reg, benchmarkDeadline(t.Def, t.s.now()))
	if err != nil {
		return nil, err
	}
	qs := make([]registry.Question, 0, len(cfg.Questions))
	for _, q := range cfg.Questions {
		qs = append(qs, registry.Question{ID: q.ID, Prompt: q.Prompt, Choices: t.s.shuffled(moved.ID, q.ID, q.Choices), Points: q.Points})
	}
	return &Started{Registration: moved, Questions: qs, PassingScore: cfg.PassingScore, ExpiresAt: benchmarkDeadline(t.Def, moved.StartedAt),
		Instructions: "Answer every question and submit {\"answers\": {\"<question id>\": \"<answer>\"}} before expires_at; a multiple-choice answer is the text of the choice."}, nil
}

func (benchmarkRunner) Submit(ctx context.Context, t *Take, decode func(any) error) (*Submitted, error) {
	if err := t.open(ctx); err != nil {
		return nil, submitRefusal(t.Entry, err)
	}
	var sub BenchmarkSubmission
	if err := decode(&sub); err != nil {
		return nil, err
	}
	if sub.Answers == nil {
		return nil, missing("answers", "Submit {\"answers\": {\"question id\": \"answer\"}}.")
	}
	cfg, err := t.s.questions(t.Def, t.Reg.ID)
	if err != nil {
		return nil, err
	}
	known := map[string]registry.Question{}
	for _, q := range cfg.Questions {
		known[q.ID] = q
	}
	for id, ans := range sub.Answers {
		if _, ok := known[id]; !ok {
			return nil, invalid("answers", "no question "+quote(id)+" in this attempt", "Answer the questions that start returned, by id.")
		}
		if len(ans) > MaxAnswer {
			return nil, tooLarge("answers", "an answer is longer than 16 KiB", "Shorten it.")
		}
	}
	reg := t.Reg
	if reg.StartedAt.IsZero() {
		return nil, conflict("conflict", "the benchmark was not started", "Start it first: POST "+evaluationPath(t.Entry)+"/start.")
	}
	now := t.s.now()
	var choice, total float64
	free, answered := false, 0
	for _, q := range cfg.Questions {
		total += q.Points
		if sub.Answers[q.ID] != "" {
			answered++
		}
		if !q.MultipleChoice() {
			free = true
		} else if sub.Answers[q.ID] == q.Answer {
			choice += q.Points
		}
	}
	deadline := benchmarkDeadline(t.Def, reg.StartedAt)
	late := now.After(deadline)
	inputs := map[string]any{"answers": digest(sub.Answers)}
	output := []Check{{Name: "answers", Passed: true, Message: fmt.Sprintf("%d of %d questions answered, each by a known id", answered, len(cfg.Questions))}}
	// Without a judge a proctor grades the free answers, and is asked only
	// when the grade can change the outcome: when the multiple-choice
	// points alone pass (free answers only add points), the attempt passes
	// at once, its free answers counted as 0. This is also how a benchmark
	// whose free answers its own passes grade gets its first graders.
	certain := free && !t.s.judgeConfigured && Passes(choice, total, cfg.PassingScore)
	if certain {
		output = append(output, Check{Name: "free_answers", Passed: true,
			Message: "not graded: the multiple-choice points alone reach the passing score, and free answers only add points"})
	}
	if late || !free || certain {
		g := grade{passed: Passes(choice, total, cfg.PassingScore), score: &choice, maxScore: &total, started: reg.StartedAt, deadline: deadline,
			inputs: inputs, output: output, goal: []Check{passRule(choice, total, cfg.PassingScore)}}
		if late {
			g.outcome, g.reason = OutcomeExpired, "submitted after expires_at"
		} else if !g.passed {
			g.reason = "below the passing score"
		}
		return t.s.recordGrade(ctx, t, g)
	}
	submission, _ := json.Marshal(BenchmarkSubmission{Answers: sub.Answers})
	partial, _ := json.Marshal(benchmarkPartial{ChoicePoints: choice, TotalPoints: total})
	job, _, err := t.s.jobs.CreateJob(ctx, &Job{ID: registry.NewID("job_"), RegistrationID: reg.ID, AgentID: reg.AgentID,
		EvaluationID: reg.EvaluationID, Status: JobPending, CreatedAt: reg.StartedAt})
	if err != nil {
		return nil, err
	}
	return t.s.queue(ctx, t, job, submission, partial)
}

func passRule(score, maxScore, passing float64) Check {
	return Check{Name: "passing_score", Passed: Passes(score, maxScore, passing),
		Message: fmt.Sprintf("%g of %g points; %g%% needed", score, maxScore, passing)}
}

// queue hands a submission to the judge (or the proctor) and moves the
// registration to awaiting_grading.
func (s *Service) queue(ctx context.Context, t *Take, job *Job, submission, partial []byte) (*Submitted, error) {
	queued, err := s.jobs.SubmitJob(ctx, job.ID, submission, partial, s.now())
	if err != nil {
		if isConflict(err) {
			return nil, conflict("already_completed", "this attempt was already submitted", "Poll its job: GET "+evaluationPath(t.Entry)+"/jobs/"+job.ID+".")
		}
		return nil, err
	}
	if _, err := s.attempts.MoveRegistration(ctx, t.Reg.ID, []RegistrationStatus{RegInProgress}, RegAwaitingGrading, s.now()); err != nil {
		return nil, err
	}
	return &Submitted{Job: queued}, nil
}

// judgeBenchmark has the judge grade a benchmark job's free answers.
func (benchmarkRunner) judge(ctx context.Context, s *Service, j Judge, def *Definition, job *Job) (grade, error) {
	var sub BenchmarkSubmission
	var partial benchmarkPartial
	if err := json.Unmarshal(job.Submission, &sub); err != nil {
		return grade{}, err
	}
	if err := json.Unmarshal(job.Partial, &partial); err != nil {
		return grade{}, err
	}
	cfg, err := s.questions(def, job.RegistrationID)
	if err != nil {
		return grade{}, err
	}
	msgs, ids := BenchmarkMessages(def.Name, cfg, sub.Answers)
	verdict, err := j.Ask(ctx, msgs, ids)
	if err != nil {
		return grade{}, err
	}
	score := partial.ChoicePoints + BenchmarkFreeScore(cfg, verdict.Grades())
	g := benchmarkGrade(def, job, score, partial.TotalPoints)
	g.details = map[string]any{"judge_model": verdict.Model, "judge_raw": verdict.Raw, "scores": BenchmarkFreeScores(cfg, verdict), "summary": verdict.Summary}
	g.inputs["judge_model"] = verdict.Model
	return g, nil
}

// benchmarkGrade is the grade of a benchmark whose free answers were
// scored (by the judge or a proctor).
func benchmarkGrade(def *Definition, job *Job, score, total float64) grade {
	cfg := def.Config.Benchmark
	g := grade{passed: Passes(score, total, cfg.PassingScore), score: &score, maxScore: &total, started: job.CreatedAt,
		execution: []Check{acceptedInTime},
		inputs:    map[string]any{"submission": digest(json.RawMessage(job.Submission))},
		goal:      []Check{passRule(score, total, cfg.PassingScore)}}
	if !g.passed {
		g.reason = fmt.Sprintf("scored %g of %g", score, total)
	}
	return g
}
