// Package judge is the client of the model that grades answers needing
// judgement (certification transcripts, free-response benchmark
// answers): it asks an OpenAI-compatible chat-completions API with the
// messages registry/evaluation builds and reads back per-item scores.
// What the judge is given and how its scores count are the evaluation
// runtime's rules (registry/evaluation/judging.go).
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

	"github.com/sipregistry/sip/registry/evaluation"
)

// The ways a call to the judge fails are the evaluation runtime's to name
// (registry/evaluation/judgeoutage.go): Ask wraps each failure in one of
// them, so the worker waits out an outage instead of failing the attempt.
var (
	ErrBadAnswer   = evaluation.ErrJudgeBadAnswer
	ErrUnreachable = evaluation.ErrJudgeUnreachable
	ErrTimeout     = evaluation.ErrJudgeTimeout
	ErrUnavailable = evaluation.ErrJudgeUnavailable
)

// IsOutage says whether err means the judge is down (evaluation.IsJudgeOutage).
func IsOutage(err error) bool { return evaluation.IsJudgeOutage(err) }

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

// Message, Score and Verdict are the evaluation runtime's, so a Client
// is its evaluation.Judge.
type (
	Message = evaluation.JudgeMessage
	Score   = evaluation.ItemScore
	Verdict = evaluation.Verdict
)

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
