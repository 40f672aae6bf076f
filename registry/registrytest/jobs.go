package registrytest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// JobFullStore is a store of registrations and their judging jobs.
type JobFullStore interface {
	FullStore
	evaluation.JobStore
	evaluation.JudgingStore
}

// RunJobStoreTests runs the judging queue's half of the conformance suite.
func RunJobStoreTests(t *testing.T, open func(t *testing.T) JobFullStore) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, JobFullStore)
	}{
		{"OneJobPerRegistration", testJobOnePerRegistration},
		{"SubmitOnlyPending", testJobSubmit},
		{"ClaimDueInOrder", testJobClaimOrder},
		{"ExpiredLeaseIsTakenAgain", testJobLeaseExpiry},
		{"ExtendedLeaseHolds", testJobLeaseExtended},
		{"RetryWaitsItsTurn", testJobRetry},
		{"FailRecordsAResult", testJobFail},
		{"CompleteRecordsAResult", testJobComplete},
		{"ConcurrentClaimsTakeEachOnce", testJobConcurrentClaims},
		{"AResultExpiresAPendingJob", testJobExpiredByResult},
		{"Stats", testJobStats},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// newJob registers a new agent for alpha, starts the attempt and opens
// its job.
func newJob(t *testing.T, s JobFullStore, i int) (*evaluation.Job, *evaluation.Registration) {
	t.Helper()
	_, alpha := evalFixture(t, s)
	agent, _ := mustAgent(t, s, fmt.Sprintf("job-agent-%d-%d", i, time.Now().UnixNano()%1e9))
	reg, _, err := s.Register(t.Context(), newRegistration(t, agent, alpha, i))
	if err != nil {
		t.Fatal(err)
	}
	if reg, err = s.StartAttempt(t.Context(), reg.ID, t0, t0.Add(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	j, created, err := s.CreateJob(t.Context(), &evaluation.Job{ID: registry.NewID("job_"), RegistrationID: reg.ID, AgentID: agent.ID,
		EvaluationID: alpha.ID, Status: evaluation.JobPending, Nonce: "n", NonceExpiresAt: t0.Add(30 * time.Minute), CreatedAt: t0})
	if err != nil || !created {
		t.Fatalf("CreateJob = %v, %v", created, err)
	}
	return j, reg
}

// submitted is newJob submitted at at.
func submitted(t *testing.T, s JobFullStore, i int, at time.Time) (*evaluation.Job, *evaluation.Registration) {
	t.Helper()
	j, reg := newJob(t, s, i)
	j, err := s.SubmitJob(t.Context(), j.ID, []byte(`{"answers":{}}`), []byte(`{}`), at)
	if err != nil {
		t.Fatal(err)
	}
	return j, reg
}

func claimJob(t *testing.T, s JobFullStore, now time.Time, lease time.Duration) *evaluation.Job {
	t.Helper()
	j, err := s.ClaimJob(t.Context(), now, now.Add(lease))
	if errors.Is(err, registry.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("ClaimJob: %v", err)
	}
	return j
}

func testJobOnePerRegistration(t *testing.T, s JobFullStore) {
	j, reg := newJob(t, s, 0)
	again, created, err := s.CreateJob(t.Context(), &evaluation.Job{ID: "job_other", RegistrationID: reg.ID, AgentID: reg.AgentID,
		EvaluationID: reg.EvaluationID, Status: evaluation.JobPending, CreatedAt: t0.Add(time.Minute)})
	if err != nil || created || again.ID != j.ID || again.Nonce != "n" {
		t.Errorf("second CreateJob = %+v, %v, %v; want the first job, not created", again, created, err)
	}
	if got, err := s.JobByRegistration(t.Context(), reg.ID); err != nil || got.ID != j.ID {
		t.Errorf("JobByRegistration = %+v, %v", got, err)
	}
	if _, err := s.Job(t.Context(), "job_nope"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Job of an unknown id: %v, want ErrNotFound", err)
	}
}

func testJobSubmit(t *testing.T, s JobFullStore) {
	j, _ := newJob(t, s, 0)
	if c := claimJob(t, s, t0.Add(time.Hour), time.Minute); c != nil {
		t.Fatalf("a pending job was claimed: %+v", c)
	}
	got, err := s.SubmitJob(t.Context(), j.ID, []byte(`{"a":1}`), []byte(`{"p":1}`), t0.Add(time.Minute))
	if err != nil || got.Status != evaluation.JobSubmitted || string(got.Submission) != `{"a":1}` || string(got.Partial) != `{"p":1}` {
		t.Fatalf("SubmitJob = %+v, %v", got, err)
	}
	if _, err := s.SubmitJob(t.Context(), j.ID, []byte(`{"a":2}`), nil, t0.Add(2*time.Minute)); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("submitting twice: %v, want ErrConflict", err)
	}
	if err := s.ExpireJob(t.Context(), j.ID, t0); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("expiring a submitted job: %v, want ErrConflict", err)
	}
	if _, err := s.SubmitJob(t.Context(), "job_nope", nil, nil, t0); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("submitting an unknown job: %v, want ErrNotFound", err)
	}
}

func testJobClaimOrder(t *testing.T, s JobFullStore) {
	second, _ := submitted(t, s, 1, t0.Add(2*time.Minute))
	first, _ := submitted(t, s, 2, t0.Add(time.Minute))
	if c := claimJob(t, s, t0, time.Minute); c != nil {
		t.Fatalf("a job submitted later was claimed early: %+v", c)
	}
	now := t0.Add(3 * time.Minute)
	for i, want := range []string{first.ID, second.ID} {
		c := claimJob(t, s, now, time.Minute)
		if c == nil || c.ID != want || c.Status != evaluation.JobJudging || c.Attempts != 1 || !c.LeaseUntil.Equal(now.Add(time.Minute)) {
			t.Fatalf("claim %d = %+v, want %s judging, attempt 1, leased a minute", i, c, want)
		}
	}
	if c := claimJob(t, s, now, time.Minute); c != nil {
		t.Errorf("a third claim took %+v", c)
	}
}

func testJobLeaseExpiry(t *testing.T, s JobFullStore) {
	j, _ := submitted(t, s, 0, t0)
	if c := claimJob(t, s, t0, 15*time.Second); c == nil || c.ID != j.ID {
		t.Fatalf("claim = %+v", c)
	}
	if c := claimJob(t, s, t0.Add(14*time.Second), 15*time.Second); c != nil {
		t.Fatalf("a leased job was taken again before its lease ran out: %+v", c)
	}
	c := claimJob(t, s, t0.Add(15*time.Second), 15*time.Second)
	if c == nil || c.ID != j.ID || c.Attempts != 2 {
		t.Fatalf("after the lease ran out: %+v, want %s at attempt 2", c, j.ID)
	}
}

func testJobLeaseExtended(t *testing.T, s JobFullStore) {
	j, _ := submitted(t, s, 0, t0)
	claimJob(t, s, t0, 15*time.Second)
	if err := s.ExtendJobLease(t.Context(), j.ID, t0.Add(25*time.Second)); err != nil {
		t.Fatal(err)
	}
	if c := claimJob(t, s, t0.Add(20*time.Second), 15*time.Second); c != nil {
		t.Fatalf("a job whose lease was extended was taken: %+v", c)
	}
	if err := s.RetryJob(t.Context(), j.ID, t0.Add(time.Hour), "boom"); err != nil {
		t.Fatal(err)
	}
	if err := s.ExtendJobLease(t.Context(), j.ID, t0.Add(time.Hour)); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("extending the lease of a job no longer judged: %v, want ErrConflict", err)
	}
}

func testJobRetry(t *testing.T, s JobFullStore) {
	j, _ := submitted(t, s, 0, t0)
	claimJob(t, s, t0, time.Minute)
	if err := s.RetryJob(t.Context(), j.ID, t0.Add(10*time.Second), "judge answered HTTP 503"); err != nil {
		t.Fatal(err)
	}
	if err := s.RetryJob(t.Context(), j.ID, t0, "again"); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("retrying a job not being judged: %v, want ErrConflict", err)
	}
	if c := claimJob(t, s, t0.Add(9*time.Second), time.Minute); c != nil {
		t.Fatalf("a retried job was taken before it was due: %+v", c)
	}
	c := claimJob(t, s, t0.Add(10*time.Second), time.Minute)
	if c == nil || c.Attempts != 2 || c.LastError != "judge answered HTTP 503" {
		t.Fatalf("retried claim = %+v, want attempt 2 with the last error", c)
	}
}

func jobResult(reg *evaluation.Registration, outcome evaluation.Outcome) *evaluation.Result {
	r := result(reg, outcome == evaluation.OutcomePassed, t0.Add(time.Hour))
	r.Outcome = outcome
	return r
}

func testJobFail(t *testing.T, s JobFullStore) {
	j, reg := submitted(t, s, 0, t0)
	if err := s.FailJob(t.Context(), j.ID, "down", jobResult(reg, evaluation.OutcomeInfrastructureFailure)); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("failing a job nobody judges: %v, want ErrConflict", err)
	}
	claimJob(t, s, t0, time.Minute)
	if err := s.FailJob(t.Context(), j.ID, "down", jobResult(reg, evaluation.OutcomeInfrastructureFailure)); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Job(t.Context(), j.ID)
	if got.Status != evaluation.JobFailed || got.LastError != "down" || got.ResultID == "" {
		t.Errorf("failed job %+v", got)
	}
	res, err := s.Result(t.Context(), got.ResultID)
	if err != nil || res.EndedAs() != evaluation.OutcomeInfrastructureFailure || res.Passed {
		t.Errorf("its result %+v, %v", res, err)
	}
	if r, _ := s.Registration(t.Context(), reg.ID); r.Status != evaluation.RegCompleted {
		t.Errorf("registration %s after a failed job, want completed", r.Status)
	}
	if c := claimJob(t, s, t0.Add(time.Hour), time.Minute); c != nil {
		t.Errorf("a failed job was claimed: %+v", c)
	}
}

func testJobComplete(t *testing.T, s JobFullStore) {
	j, reg := submitted(t, s, 0, t0)
	claimJob(t, s, t0, time.Minute)
	saved, err := s.CompleteJob(t.Context(), j.ID, jobResult(reg, evaluation.OutcomePassed), 5)
	if err != nil || !saved.Passed || saved.PointsEarned != 5 {
		t.Fatalf("CompleteJob = %+v, %v", saved, err)
	}
	got, _ := s.Job(t.Context(), j.ID)
	if got.Status != evaluation.JobCompleted || got.ResultID != saved.ID {
		t.Errorf("completed job %+v", got)
	}
	again := jobResult(reg, evaluation.OutcomePassed)
	again.ID = "res_again"
	if _, err := s.CompleteJob(t.Context(), j.ID, again, 5); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("completing twice: %v, want ErrConflict", err)
	}
	if _, err := s.Result(t.Context(), "res_again"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("the refused completion left a result: %v", err)
	}
}

func testJobConcurrentClaims(t *testing.T, s JobFullStore) {
	const n = 12
	for i := range n {
		submitted(t, s, i+1, t0)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for {
				j, err := s.ClaimJob(t.Context(), t0.Add(time.Minute), t0.Add(time.Hour))
				if errors.Is(err, registry.ErrNotFound) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[j.ID]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d distinct jobs claimed, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("job %s claimed %d times", id, k)
		}
	}
}

func testJobExpiredByResult(t *testing.T, s JobFullStore) {
	j, reg := newJob(t, s, 0)
	if _, err := s.RecordResult(t.Context(), jobResult(reg, evaluation.OutcomeExpired), 0); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Job(t.Context(), j.ID)
	if got.Status != evaluation.JobExpired {
		t.Errorf("the job of an attempt that ended is %s, want expired", got.Status)
	}
	if _, err := s.SubmitJob(t.Context(), j.ID, []byte(`{}`), nil, t0); !errors.Is(err, registry.ErrConflict) {
		t.Errorf("submitting the job of an ended attempt: %v, want ErrConflict", err)
	}
}

func testJobStats(t *testing.T, s JobFullStore) {
	if st, err := s.JobStats(t.Context()); err != nil || st != (evaluation.JobStats{}) {
		t.Fatalf("empty stats = %+v, %v", st, err)
	}
	newJob(t, s, 1) // pending: not in the queue yet
	submitted(t, s, 2, t0.Add(time.Minute))
	submitted(t, s, 3, t0.Add(2*time.Minute))
	failing, reg := submitted(t, s, 4, t0)
	claimJob(t, s, t0.Add(time.Minute), time.Hour) // the oldest due: failing
	if err := s.FailJob(t.Context(), failing.ID, "down", jobResult(reg, evaluation.OutcomeInfrastructureFailure)); err != nil {
		t.Fatal(err)
	}
	claimJob(t, s, t0.Add(time.Minute), time.Hour) // the next: judging
	st, err := s.JobStats(t.Context())
	if err != nil || st.Waiting != 1 || st.Judging != 1 || st.Failed != 1 || !st.OldestWaiting.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("stats = %+v, %v; want 1 waiting since t0+2m, 1 judging, 1 failed", st, err)
	}
}
