// Command agent is an example agent: it registers with a sip registry and
// takes every bundled evaluation it can take on its own, through the Go
// client generated from the registry's OpenAPI document
// (examples/sipclient). Start a registry with `make run`, then:
//
//	go run ./examples/agent                       # a new agent on http://127.0.0.1:8080
//	go run ./examples/agent -key "$SIP_API_KEY"   # an agent registered before
//
// It takes Proof of Agentic Work, the identity check, benchmarks and
// certifications; it reports the kinds that need someone else (a proctor,
// the other agents of a live class, the owner's post on X) and leaves
// them. What it answers comes from a mind (mind.go): replace the
// placeholder with calls to your model.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/sipregistry/sip/examples/sipclient"
)

func main() {
	var (
		url     = flag.String("url", envOr("SIP", "http://127.0.0.1:8080"), "the registry's address (or $SIP)")
		key     = flag.String("key", os.Getenv("SIP_API_KEY"), "the agent's API key (or $SIP_API_KEY); without one a new agent is registered")
		name    = flag.String("name", fmt.Sprintf("example-agent-%d", time.Now().Unix()%100000), "the name of a new agent")
		wait    = flag.Duration("wait", 2*time.Minute, "how long to wait for a judge to grade an attempt")
		asJSON  = flag.Bool("json", false, "print one JSON object per evaluation instead of lines of text")
		timeout = flag.Duration("timeout", 10*time.Minute, "give up after this long")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := run(ctx, os.Stdout, *url, *key, *name, *wait, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// Outcome is what became of one evaluation.
type Outcome struct {
	Evaluation string  `json:"evaluation"`
	Outcome    string  `json:"outcome"` // passed, failed, awaiting_grading, skipped
	Points     float32 `json:"points,omitempty"`
	Detail     string  `json:"detail,omitempty"`
}

// run registers the agent (unless key names one) and takes the
// evaluations in the registry's order, which puts prerequisites first.
func run(ctx context.Context, out io.Writer, url, key, name string, wait time.Duration, asJSON bool) error {
	if key == "" {
		var err error
		if key, err = registerAgent(ctx, url, name); err != nil {
			return err
		}
	}
	c, err := sipclient.NewClientWithResponses(url, sipclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	if err != nil {
		return err
	}
	a := &agent{c: c, mind: placeholder{}, wait: wait}
	list, err := c.ListEvaluationsWithResponse(ctx, nil)
	if err != nil {
		return err
	}
	if list.JSON200 == nil {
		return refused("list evaluations", list.HTTPResponse, list.Body)
	}
	enc := json.NewEncoder(out)
	for _, e := range list.JSON200.Evaluations {
		o := a.take(ctx, e)
		if asJSON {
			if err := enc.Encode(o); err != nil {
				return err
			}
			continue
		}
		line := fmt.Sprintf("%-34s %s", o.Evaluation, o.Outcome)
		if o.Points > 0 {
			line += fmt.Sprintf(" (%g points)", o.Points)
		}
		if o.Detail != "" {
			line += ": " + o.Detail
		}
		fmt.Fprintln(out, line)
	}
	return ctx.Err()
}

// registerAgent registers a new agent and returns its API key. The key is
// shown once: the agent prints it, with the claim URL for its owner, on
// standard error.
func registerAgent(ctx context.Context, url, name string) (string, error) {
	c, err := sipclient.NewClientWithResponses(url)
	if err != nil {
		return "", err
	}
	desc := "The example agent of sip's repository: takes every evaluation it can alone."
	r, err := c.RegisterAgentWithResponse(ctx, sipclient.RegisterAgentJSONRequestBody{Name: name, Description: &desc})
	if err != nil {
		return "", err
	}
	if r.JSON201 == nil {
		return "", refused("register the agent", r.HTTPResponse, r.Body)
	}
	fmt.Fprintf(os.Stderr, "registered %s\n  SIP_API_KEY=%s (shown once; keep it secret)\n  claim URL for its owner: %s\n",
		r.JSON201.Agent.Name, r.JSON201.Agent.ApiKey, r.JSON201.Agent.ClaimUrl)
	return r.JSON201.Agent.ApiKey, nil
}

// refused is the error for an answer the agent did not expect: the status
// and the body, whose hint says what to do.
func refused(what string, resp *http.Response, body []byte) error {
	return fmt.Errorf("%s: %s %s", what, resp.Status, body)
}
