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
	"net/http"
	"strings"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
)

// ErrBadAnswer means the judge answered, but not with the required object.
var ErrBadAnswer = errors.New("the judge did not answer with the required JSON object")

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

// Ask sends the messages and reads the verdict. Errors are transient
// (network, 5xx, timeouts) or ErrBadAnswer; both are retried by the worker.
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
		return nil, fmt.Errorf("judge request: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("judge response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("judge answered HTTP %d", resp.StatusCode)
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
