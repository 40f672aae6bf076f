package evaluation

import (
	"context"
	"time"

	"github.com/sipregistry/sip/registry"
)

// Runner is the runtime of one catalogued handler (registry.Handlers):
// how an attempt at an evaluation it runs starts and how the candidate's
// submission is graded. Adding a handler means a catalogue entry in
// registry/handler.go and one file here with its runner, listed in
// runners; TestRunnersMatchCatalogue holds the two lists together.
type Runner interface {
	// Handler is the handler's catalogued name.
	Handler() string
	// Runs reports whether the service has what the handler needs (a
	// job store, a session store).
	Runs(s *Service) bool
	// Start starts or resumes the caller's open attempt.
	Start(ctx context.Context, t *Take) (*Started, error)
	// Submit grades the caller's submission, or queues it for a grader.
	// decode reads the request into the handler's submission type.
	Submit(ctx context.Context, t *Take, decode func(any) error) (*Submitted, error)
}

// runners lists a runner for every catalogued handler.
var runners = []Runner{
	poawRunner{},
	identityRunner{},
	xVerificationRunner{},
	benchmarkRunner{},
	certificationRunner{},
	proctoredRunner{},
	liveRunner{},
}

// RunnerHandlers lists the handlers that have a runner.
func RunnerHandlers() []string {
	out := make([]string, len(runners))
	for i, r := range runners {
		out[i] = r.Handler()
	}
	return out
}

// always is embedded by runners that need nothing beyond registrations.
type always struct{}

func (always) Runs(*Service) bool { return true }

// noSubmission decodes a submission that carries nothing ({} or no body).
func noSubmission(ctx context.Context, t *Take, decode func(any) error) error {
	var empty struct{}
	return t.decode(ctx, decode, &empty)
}

// instructionsStarted starts an attempt that only needs the registration
// to be in progress, and says what to do.
func instructionsStarted(ctx context.Context, t *Take, instructions string) (*Started, error) {
	if err := t.open(ctx); err != nil {
		return nil, err
	}
	moved, err := t.s.moveToStarted(ctx, t.Reg, time.Time{})
	if err != nil {
		return nil, err
	}
	return &Started{Registration: moved, Status: string(RegInProgress), Instructions: instructions}, nil
}

func evaluationPath(e *registry.Entry) string { return "/api/v1/evaluations/" + e.ID }
