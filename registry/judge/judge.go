// Package judge grades answers that need judgement: certification
// transcripts and free-response benchmark answers. It asks an
// OpenAI-compatible chat-completions API, gives it the SIP's own prompts,
// should lists and rubric (never text the agent supplied as a prompt),
// fences the agent's answers as data, and trusts nothing of the reply but
// per-item scores, which it clamps; totals and pass/fail are computed here.
package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// ErrBadAnswer means the judge answered, but not with the required object.
var ErrBadAnswer = errors.New("the judge did not answer with the required JSON object")

// The ways a judge can be down. Ask wraps each failure in one of them (or
// in ErrBadAnswer), so the worker waits out an outage instead of failing
// the attempt, and the agent's note says what happened.
var (
	// ErrUnreachable: no connection (refused, reset, no route, DNS).
	ErrUnreachable = errors.New("the judge could not be reached")
	// ErrTimeout: the judge did not answer in time.
	ErrTimeout = errors.New("the judge did not answer in time")
	// ErrUnavailable: the judge answered 429 or a 5xx status.
	ErrUnavailable = errors.New("the judge is unavailable")
)

// IsOutage says whether err means the judge is down (unreachable, timing
// out, overloaded) rather than that it answered badly: an outage is waited
// out, a bad answer is retried a few times and then ends the attempt.
func IsOutage(err error) bool {
	return errors.Is(err, ErrUnreachable) || errors.Is(err, ErrTimeout) || errors.Is(err, ErrUnavailable)
}

// Explain turns a job's last error, as the worker recorded it, into a
// sentence for the agent that says what happened to the judge.
func Explain(lastError string) string {
	const waits = "; the job waits and is retried until it answers"
	switch {
	case strings.Contains(lastError, ErrUnreachable.Error()+": connection refused"):
		return "the judge refused the connection" + waits
	case strings.Contains(lastError, ErrUnreachable.Error()):
		return ErrUnreachable.Error() + waits
	case strings.Contains(lastError, ErrTimeout.Error()):
		return ErrTimeout.Error() + waits
	case strings.Contains(lastError, ErrUnavailable.Error()):
		// "…: it answered HTTP 503": the status, never the judge's address.
		_, status, _ := strings.Cut(lastError, ErrUnavailable.Error()+": ")
		return ErrUnavailable.Error() + " (" + status + ")" + waits
	case strings.Contains(lastError, ErrBadAnswer.Error()):
		return "the judge's last answer was unusable; retrying"
	}
	return "the judge's last attempt failed; retrying"
}

// classify wraps a failed request in the outage it shows.
func classify(ctx context.Context, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	case ctx.Err() != nil:
		return err // cancelled by the caller: not the judge's fault
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%w: connection refused", ErrUnreachable)
	}
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
}

// Client calls a chat-completions endpoint.
type Client struct {
	URL    string // base URL; the client POSTs to URL + "/chat/completions"
	Model  string
	APIKey string
	HTTP   *http.Client
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Score is the judge's score of one item (a prompt or a question).
type Score struct {
	PromptID string  `json:"prompt_id"`
	Score    float64 `json:"score"`
	Feedback string  `json:"feedback"`
}

// Verdict is what the judge said: per-item scores, a summary, and its raw
// answer for the record.
type Verdict struct {
	Scores  []Score
	Summary string
	Raw     string
	Model   string
}

// Ask sends the messages and reads the verdict. An error wraps
// ErrUnreachable, ErrTimeout or ErrUnavailable (the judge is down: IsOutage)
// or ErrBadAnswer (it answered, unusably).
func (c *Client) Ask(ctx context.Context, messages []Message, ids []string) (*Verdict, error) {
	body, err := json.Marshal(map[string]any{
		"model": c.Model, "messages": messages, "temperature": 0,
		"response_format": map[string]string{"type": "json_object"},
	})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.URL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, classify(ctx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, classify(ctx, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		return nil, fmt.Errorf("%w: it answered HTTP %d", ErrUnavailable, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		// 4xx: our request or our key is wrong; retrying will not help
		// until an operator acts, so it counts as an unusable answer.
		return nil, fmt.Errorf("%w: it answered HTTP %d", ErrBadAnswer, resp.StatusCode)
	}
	var completion struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &completion); err != nil || len(completion.Choices) == 0 {
		return nil, fmt.Errorf("%w: not a chat completion", ErrBadAnswer)
	}
	content := completion.Choices[0].Message.Content
	v, err := parseVerdict(content, ids)
	if err != nil {
		return nil, err
	}
	v.Raw, v.Model = content, completion.Model
	if v.Model == "" {
		v.Model = c.Model
	}
	return v, nil
}

// parseVerdict reads {"scores": [{"prompt_id", "score", "feedback"}],
// "summary"}: every id exactly once, scores finite numbers. Anything else
// in the object is ignored; anything that is not the object is refused.
func parseVerdict(content string, ids []string) (*Verdict, error) {
	s := strings.TrimSpace(content)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "```json"), "```")
	s = strings.TrimSpace(strings.TrimSuffix(s, "```"))
	var answer struct {
		Scores []struct {
			PromptID *string  `json:"prompt_id"`
			Score    *float64 `json:"score"`
			Feedback string   `json:"feedback"`
		} `json:"scores"`
		Summary string `json:"summary"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&answer); err != nil || dec.More() {
		return nil, fmt.Errorf("%w: %v", ErrBadAnswer, err)
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	v := &Verdict{Summary: answer.Summary}
	seen := map[string]bool{}
	for _, sc := range answer.Scores {
		if sc.PromptID == nil || sc.Score == nil {
			return nil, fmt.Errorf("%w: a score lacks prompt_id or score", ErrBadAnswer)
		}
		id := *sc.PromptID
		if !want[id] || seen[id] {
			return nil, fmt.Errorf("%w: unexpected or repeated prompt_id %q", ErrBadAnswer, id)
		}
		seen[id] = true
		v.Scores = append(v.Scores, Score{PromptID: id, Score: *sc.Score, Feedback: sc.Feedback})
	}
	if len(seen) != len(want) {
		return nil, fmt.Errorf("%w: %d of %d items scored", ErrBadAnswer, len(seen), len(want))
	}
	return v, nil
}
