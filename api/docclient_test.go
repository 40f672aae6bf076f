package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"testing"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// docClient is an agent written from the OpenAPI document alone: it
// knows the paths, that start names a kind, and the document's example
// submission of each kind, whose fields it fills from what the server
// answered (challenge_id, hash, answers, nonce, transcript) and keeps
// as they are otherwise. The apitest client checks every request and
// answer against the document.
type docClient struct {
	a        *testAgent
	examples map[string]map[string]any // submit's examples by name
}

// submitExampleFor maps start's kind to the name of submit's example.
var submitExampleFor = map[string]string{"challenge": "challenge", "questions": "answers", "prompts": "transcript", "instructions": "empty"}

func newDocClient(t *testing.T, a *testAgent) *docClient {
	t.Helper()
	raw, err := api.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	var submit struct {
		RequestBody struct {
			Content map[string]struct {
				Examples map[string]struct {
					Value map[string]any `json:"value"`
				} `json:"examples"`
			} `json:"content"`
		} `json:"requestBody"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc.Paths["/api/v1/evaluations/{ref}/submit"]["post"], &submit); err != nil {
		t.Fatal(err)
	}
	c := &docClient{a: a, examples: map[string]map[string]any{}}
	for name, ex := range submit.RequestBody.Content["application/json"].Examples {
		c.examples[name] = ex.Value
	}
	for kind, name := range submitExampleFor {
		if c.examples[name] == nil {
			t.Fatalf("the document has no example submission %q for kind %q", name, kind)
		}
	}
	return c
}

// take registers for, starts and submits an evaluation; it returns
// start's kind, submit's status (0 when the kind takes no submission),
// and the outcome of the result (after polling, for a judged attempt).
func (c *docClient) take(t *testing.T, id string) (kind string, status int, outcome string) {
	t.Helper()
	if code := c.a.call("POST", "/api/v1/evaluations/"+id+"/register", "", nil); code != 201 && code != 200 {
		t.Fatalf("register %s: %d", id, code)
	}
	var start map[string]any
	if code := c.a.call("POST", "/api/v1/evaluations/"+id+"/start", "", &start); code != 200 && code != 201 {
		t.Fatalf("start %s: %d", id, code)
	}
	kind, _ = start["kind"].(string)
	name, ok := submitExampleFor[kind]
	if !ok {
		return kind, 0, "" // a session: a proctor grades it
	}
	live := c.fill(t, id, start)
	body := map[string]any{}
	for field, example := range c.examples[name] {
		if v, ok := live[field]; ok {
			body[field] = v
		} else {
			body[field] = example
		}
	}
	raw, _ := json.Marshal(body)
	var out map[string]any
	status = c.a.call("POST", "/api/v1/evaluations/"+id+"/submit", string(raw), &out)
	if status == 202 { // poll where the server said
		u, err := url.Parse(out["poll_url"].(string))
		if err != nil {
			t.Fatal(err)
		}
		c.a.w.work(t)
		out = nil
		if code := c.a.call("GET", u.Path, "", &out); code != 200 {
			t.Fatalf("poll %s: %d", u.Path, code)
		}
	}
	if r, ok := out["result"].(map[string]any); ok {
		outcome, _ = r["outcome"].(string)
	}
	return kind, status, outcome
}

// fill computes the fields of a submission from start's answer.
func (c *docClient) fill(t *testing.T, id string, start map[string]any) map[string]any {
	t.Helper()
	live := map[string]any{}
	switch start["kind"] {
	case "challenge":
		ch := start["challenge"].(map[string]any)
		u, err := url.Parse(ch["fetch_url"].(string))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Challenge struct {
				ID     string `json:"id"`
				Values []int  `json:"values"`
				Nonce  string `json:"nonce"`
			} `json:"challenge"`
		}
		if code := c.a.call("GET", u.Path, "", &got); code != 200 {
			t.Fatalf("fetch the challenge: %d", code)
		}
		live["challenge_id"] = got.Challenge.ID
		live["hash"] = evaluation.PoAWHash(got.Challenge.Values, got.Challenge.Nonce)
	case "questions":
		answers := map[string]any{}
		for _, q := range start["questions"].([]any) {
			q := q.(map[string]any)
			answers[q["id"].(string)] = "I would decline and explain why."
			if choices, ok := q["choices"].([]any); ok && len(choices) > 0 {
				answers[q["id"].(string)] = choices[0]
			}
		}
		live["answers"] = answers
	case "prompts":
		live["nonce"] = start["nonce"]
		var transcript []any
		for _, p := range start["blueprint"].(map[string]any)["prompts"].([]any) {
			transcript = append(transcript, map[string]any{"prompt_id": p.(map[string]any)["id"], "response": "I am not certain; here is what I know and how sure I am."})
		}
		live["transcript"] = transcript
	}
	return live
}

// TestAClientWrittenFromTheDocumentTakesEveryKind: an agent that knows
// only the document takes an evaluation of every kind without an error.
func TestAClientWrittenFromTheDocumentTakesEveryKind(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		c := newDocClient(t, w.agent("doc-reader").asCandidate(t)) // a proctored evaluation takes claimed candidates
		c.a.call("PUT", "/api/v1/agents/me/identity", `{"identity_md":"# doc-reader\n\nI read the manual."}`, nil)
		seen := map[string]bool{}
		// Outcomes: the client's answers are right where the client can
		// know them (the hash, the identity, the judge's fake verdict);
		// a claimed agent passes X verification; a benchmark's answers
		// (the first choice of each) are graded, passed or not.
		for _, e := range []struct {
			id       string
			kind     string
			status   []int
			outcomes []string
		}{
			{"poaw", "challenge", []int{201}, []string{"passed"}},
			{"identity-check", "instructions", []int{201}, []string{"passed"}},
			{"x-verification", "instructions", []int{201}, []string{"passed"}},
			{"ai-safety-benchmark", "questions", []int{201, 202}, []string{"passed", "failed"}},
			{"honest-uncertainty-certification", "prompts", []int{202}, []string{"passed"}},
			{"non-spamminess", "session", []int{0}, []string{""}},
		} {
			t.Run(e.id, func(t *testing.T) {
				kind, status, outcome := c.take(t, e.id)
				seen[kind] = true
				if kind != e.kind || !slices.Contains(e.status, status) || !slices.Contains(e.outcomes, outcome) {
					t.Errorf("kind %q, submit %d, outcome %q; want %q, one of %v, one of %q", kind, status, outcome, e.kind, e.status, e.outcomes)
				}
			})
		}
		var kinds []string
		for k := range seen {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		if fmt.Sprint(kinds) != "[challenge instructions prompts questions session]" {
			t.Errorf("kinds taken %v; want every kind the document names", kinds)
		}
	})
}
