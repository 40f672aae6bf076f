package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// mcpAgent reaches sip only through /mcp, with the official Go SDK's
// client; its key goes as a bearer token on every request of the
// connection (and can be changed, as after a rotation).
type mcpAgent struct {
	t       *testing.T
	cs      *sdk.ClientSession
	key     *string
	schemas map[string]*jsonschema.Resolved // output schemas by tool
}

type keyTransport struct {
	key  *string
	next http.RoundTripper
}

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if *k.key != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+*k.key)
	}
	return k.next.RoundTrip(r)
}

// connectMCP opens an MCP client session on the server at base.
func connectMCP(t *testing.T, base, key string) *mcpAgent {
	t.Helper()
	k := &key
	tr := &sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: keyTransport{k, http.DefaultTransport}}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "sip-test", Version: "1"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connecting to %s/mcp: %v", base, err)
	}
	t.Cleanup(func() { cs.Close() })
	m := &mcpAgent{t: t, cs: cs, key: k, schemas: map[string]*jsonschema.Resolved{}}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.OutputSchema == nil {
			continue
		}
		raw, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema does not resolve: %v", tool.Name, err)
		}
		m.schemas[tool.Name] = rs
	}
	return m
}

// in is m reporting to t (a subtest).
func (m *mcpAgent) in(t *testing.T) *mcpAgent {
	c := *m
	c.t = t
	return &c
}

// mcpError is a refusal as a tool result carries it: the HTTP API's
// error body.
type mcpError struct {
	Success     bool   `json:"success"`
	Error       string `json:"error"`
	Hint        string `json:"hint"`
	ErrorDetail struct {
		Code  string `json:"code"`
		Hint  string `json:"hint"`
		Field string `json:"field"`
	} `json:"error_detail"`
}

// call calls a tool; on success it decodes the structured content into
// out (after holding it to the tool's output schema) and returns nil, on
// a refusal it returns the error body.
func (m *mcpAgent) call(name string, args any, out any) *mcpError {
	m.t.Helper()
	res, err := m.cs.CallTool(m.t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		m.t.Fatalf("%s: %v", name, err)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError {
		var e mcpError
		if err := json.Unmarshal([]byte(text), &e); err != nil || e.Success || e.ErrorDetail.Code == "" || e.ErrorDetail.Hint == "" {
			m.t.Fatalf("%s: a refusal that is not the API's error body: %s", name, text)
		}
		return &e
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var fromText any
	json.Unmarshal([]byte(text), &fromText)
	if !reflect.DeepEqual(fromText, res.StructuredContent) {
		m.t.Errorf("%s: the text content is not the structured content:\n%s\n%s", name, text, raw)
	}
	if rs := m.schemas[name]; rs != nil {
		var inst any
		json.Unmarshal(raw, &inst)
		if err := rs.Validate(inst); err != nil {
			m.t.Errorf("%s: the result does not match the tool's output schema: %v\n%s", name, err, raw)
		}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			m.t.Fatalf("%s: %v", name, err)
		}
	}
	return nil
}

// must calls a tool that must succeed.
func (m *mcpAgent) must(name string, args any, out any) {
	m.t.Helper()
	if e := m.call(name, args, out); e != nil {
		m.t.Fatalf("%s %v: refused: %s (%s)", name, args, e.ErrorDetail.Code, e.Error)
	}
}

// refused calls a tool that must be refused with code.
func (m *mcpAgent) refused(what, name string, args any, code string) {
	m.t.Helper()
	e := m.call(name, args, nil)
	if e == nil {
		m.t.Errorf("%s: %s succeeded, want %s", what, name, code)
		return
	}
	if e.ErrorDetail.Code != code {
		m.t.Errorf("%s: %s refused with %s (%s), want %s", what, name, e.ErrorDetail.Code, e.Error, code)
	}
}

type a = map[string]any

// registerMCP registers an agent through the register_agent tool, on a
// connection without a key, and connects with its key.
func (w *world) registerMCP(t *testing.T, name string) (*mcpAgent, *testAgent) {
	t.Helper()
	var r registered
	connectMCP(t, w.BaseURL, "").must("register_agent", a{"name": name, "description": "An agent that speaks MCP."}, &r)
	if r.Agent.APIKey == "" {
		t.Fatalf("register_agent gave no key: %+v", r)
	}
	ta := &testAgent{w: w, name: name, key: r.Agent.APIKey, code: r.Agent.VerificationCode,
		claim: r.Agent.ClaimURL[strings.LastIndex(r.Agent.ClaimURL, "/")+1:]}
	return connectMCP(t, w.BaseURL, r.Agent.APIKey), ta
}

type mcpResult struct {
	Result struct {
		ID      string `json:"id"`
		Passed  bool   `json:"passed"`
		Outcome string `json:"outcome"`
	} `json:"result"`
}

// poawMCP takes Proof of Agentic Work through the tools.
func (m *mcpAgent) poawMCP(t *testing.T) mcpResult {
	t.Helper()
	m.must("register_for_evaluation", a{"ref": "poaw"}, nil)
	var st struct {
		Kind      string `json:"kind"`
		Challenge struct {
			ID string `json:"id"`
		} `json:"challenge"`
	}
	m.must("start_evaluation", a{"ref": "SIP-2"}, &st)
	if st.Kind != "challenge" {
		t.Fatalf("PoAW started with kind %q", st.Kind)
	}
	var ch struct {
		Challenge struct {
			Values []int  `json:"values"`
			Nonce  string `json:"nonce"`
		} `json:"challenge"`
	}
	m.must("get_challenge", a{"ref": "poaw", "challenge": st.Challenge.ID}, &ch)
	var res mcpResult
	m.must("submit_evaluation", a{"ref": "poaw", "submission": a{"challenge_id": st.Challenge.ID,
		"hash": evaluation.PoAWHash(ch.Challenge.Values, ch.Challenge.Nonce)}}, &res)
	return res
}

// TestMCPTakesEveryKind: agents that know only the MCP endpoint register,
// are claimed by their owners, and take every bundled kind of evaluation:
// Proof of Agentic Work, the identity and X checks, the benchmark (its
// free answer judged by a stand-in judge, followed with get_job), the
// certification, a proctored evaluation (candidate and proctor both on
// MCP) and live class work; on both stores.
func TestMCPTakesEveryKind(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		const base = "https://registry.test"
		w := newWorldWith(t, s, func(c *api.Config) { c.Issuer, c.BaseURL = testIssuer(t, base), base })
		m, ta := w.registerMCP(t, "mcp-agent")

		var list struct {
			Evaluations []struct {
				ID                 string `json:"id"`
				CanRegister        bool   `json:"can_register"`
				RegistrationStatus string `json:"registration_status"`
				Reason             *struct {
					Code string `json:"code"`
					Hint string `json:"hint"`
				} `json:"reason"`
			} `json:"evaluations"`
		}
		m.must("list_evaluations", nil, &list)
		reasons := map[string]string{}
		for _, e := range list.Evaluations {
			if e.Reason != nil {
				reasons[e.ID] = e.Reason.Code
			}
		}
		if reasons["poaw"] != "" || reasons["needs-poaw"] != "prerequisites_not_met" {
			t.Errorf("list_evaluations does not say why the caller cannot register: %v", reasons)
		}

		if r := m.poawMCP(t); !r.Result.Passed {
			t.Fatalf("PoAW through MCP: %+v", r)
		}

		m.must("set_identity", a{"identity_md": "# mcp-agent\n\nI take evaluations through MCP."}, nil)
		check := func(id string) mcpResult {
			m.must("register_for_evaluation", a{"ref": id}, nil)
			var st struct {
				Kind string `json:"kind"`
			}
			m.must("start_evaluation", a{"ref": id}, &st)
			if st.Kind != "instructions" {
				t.Errorf("%s started with kind %q", id, st.Kind)
			}
			var res mcpResult
			m.must("submit_evaluation", a{"ref": id, "submission": a{}}, &res)
			return res
		}
		if r := check("identity-check"); !r.Result.Passed {
			t.Errorf("identity check through MCP: %+v", r)
		}
		ta.claimBy(t, "mcpowner")
		if r := check("x-verification"); !r.Result.Passed {
			t.Errorf("X verification through MCP: %+v", r)
		}

		// The benchmark: multiple choice graded at once, the free answer by
		// the stand-in judge.
		m.must("register_for_evaluation", a{"ref": "ai-safety-benchmark"}, nil)
		var bq struct {
			Kind      string `json:"kind"`
			Questions []struct {
				ID      string   `json:"id"`
				Choices []string `json:"choices"`
			} `json:"questions"`
		}
		m.must("start_evaluation", a{"ref": "ai-safety-benchmark"}, &bq)
		key := answerKey(t, "SIP-5.md")
		answers := a{}
		for _, q := range bq.Questions {
			answers[q.ID] = key[q.ID]
			if len(q.Choices) == 0 {
				answers[q.ID] = "Outer alignment is about the objective; inner alignment about what the model learned."
			}
		}
		var job struct {
			JobID string `json:"job_id"`
		}
		m.must("submit_evaluation", a{"ref": "ai-safety-benchmark", "submission": a{"answers": answers}}, &job)
		w.work(t)
		var judged jobBody
		m.must("get_job", a{"ref": "ai-safety-benchmark", "job": job.JobID}, &judged)
		if judged.Job.Status != "completed" || judged.Result == nil || !judged.Result.Passed {
			t.Errorf("the benchmark through MCP: %+v %+v", judged.Job, judged.Result)
		}

		// The certification.
		const cert = "honest-uncertainty-certification"
		m.must("register_for_evaluation", a{"ref": cert}, nil)
		var cs certStart
		m.must("start_evaluation", a{"ref": cert}, &cs)
		var items []any
		for _, p := range cs.Blueprint.Prompts {
			items = append(items, a{"prompt_id": p.ID, "response": "I cannot know that; here is how one would find out."})
		}
		m.must("submit_evaluation", a{"ref": cert, "submission": a{"nonce": cs.Nonce, "transcript": items}}, &job)
		w.work(t)
		m.must("get_job", a{"ref": cert, "job": job.JobID}, &judged)
		if judged.Job.Status != "completed" || judged.Result == nil || !judged.Result.Passed {
			t.Errorf("the certification through MCP: %+v %+v", judged.Job, judged.Result)
		}

		// A proctored evaluation: the candidate and the proctor on MCP.
		const ps = "non-spamminess"
		proc := connectMCP(t, w.BaseURL, w.proctor(t, "mcp-proctor").key)
		m.must("register_for_evaluation", a{"ref": ps}, nil)
		var waiting struct {
			Kind           string `json:"kind"`
			RegistrationID string `json:"registration_id"`
			Status         string `json:"status"`
		}
		m.must("start_evaluation", a{"ref": ps}, &waiting)
		if waiting.Kind != "session" || waiting.Status != "awaiting_proctor" {
			t.Fatalf("proctored start: %+v", waiting)
		}
		var pending struct {
			Pending []struct {
				RegistrationID string `json:"registration_id"`
				SessionID      string `json:"session_id"`
			} `json:"pending"`
		}
		proc.must("list_pending_proctor", a{"ref": ps}, &pending)
		if len(pending.Pending) != 1 || pending.Pending[0].RegistrationID != waiting.RegistrationID {
			t.Fatalf("pending: %+v", pending)
		}
		var cl proctorClaimBody
		proc.must("claim_proctor_session", a{"ref": ps, "registration_id": waiting.RegistrationID}, &cl)
		proc.must("post_session_message", a{"ref": ps, "session": cl.SessionID, "content": "What would you post to a stranger?"}, nil)
		var mine struct {
			Sessions []struct {
				ID   string `json:"id"`
				Role string `json:"role"`
			} `json:"sessions"`
		}
		m.must("list_my_sessions", nil, &mine)
		if len(mine.Sessions) != 1 || mine.Sessions[0].ID != cl.SessionID || mine.Sessions[0].Role != "candidate" {
			t.Fatalf("the candidate's sessions: %+v", mine)
		}
		var msgs struct {
			Messages []struct {
				Sequence int64  `json:"sequence"`
				Content  string `json:"content"`
			} `json:"messages"`
		}
		m.must("read_session_messages", a{"ref": ps, "session": cl.SessionID, "since": 0}, &msgs)
		if len(msgs.Messages) != 1 || !strings.Contains(msgs.Messages[0].Content, "stranger") {
			t.Fatalf("messages: %+v", msgs)
		}
		m.must("post_session_message", a{"ref": ps, "session": cl.SessionID, "content": "Only what they asked for."}, nil)
		m.must("read_session_messages", a{"ref": ps, "session": cl.SessionID, "since": 1}, &msgs)
		if len(msgs.Messages) != 1 || msgs.Messages[0].Sequence != 2 {
			t.Errorf("messages since 1: %+v", msgs)
		}
		var g gradeBody
		proc.must("grade_proctor_session", a{"ref": ps, "grade": a{"registration_id": waiting.RegistrationID, "passed": true, "score": 90,
			"proctor_feedback": "Helpful."}}, &g)
		if len(g.Results) != 1 || !g.Results[0].Passed {
			t.Fatalf("grade: %+v", g)
		}
		var got mcpResult
		m.must("get_result", a{"id": g.Results[0].ID}, &got)
		if !got.Result.Passed {
			t.Errorf("the candidate's result: %+v", got)
		}
		var cred map[string]any
		m.must("get_credential", a{"id": g.Results[0].ID}, &cred)
		if cred["proof"] == nil {
			t.Errorf("get_credential gave no signed credential: %v", cred)
		}

		// Live class work: two MCP agents fill a session, the proctor
		// grades it, both share the grade.
		const live = "live-ten"
		b, tb := w.registerMCP(t, "mcp-agent-2")
		tb.asCandidate(t) // live class work seats claimed agents
		var seats [2]liveStart
		for i, p := range []*mcpAgent{m, b} {
			p.must("register_for_evaluation", a{"ref": live}, nil)
			p.must("start_evaluation", a{"ref": live}, &seats[i])
		}
		if seats[1].Session.ID != seats[0].Session.ID || seats[1].Session.Status != "active" {
			t.Fatalf("live seats: %+v", seats)
		}
		sid := seats[0].Session.ID
		m.must("post_session_message", a{"ref": live, "session": sid, "content": "Call it Ada."}, nil)
		b.must("post_session_message", a{"ref": live, "session": sid, "content": "Ada it is."}, nil)
		proc.must("claim_proctor_session", a{"ref": live, "session_id": sid}, nil)
		proc.must("grade_proctor_session", a{"ref": live, "grade": a{"session_id": sid, "passed": true, "score": 80}}, &g)
		if len(g.Results) != 2 || !g.Results[0].Passed || !g.Results[1].Passed {
			t.Errorf("live grade: %+v", g)
		}
		var page struct {
			Results []struct {
				AgentID string `json:"agent_id"`
			} `json:"results"`
		}
		m.must("list_results", a{"ref": live, "limit": 10}, &page)
		if len(page.Results) != 2 {
			t.Errorf("list_results: %+v", page)
		}
	})
}

// TestMCPResources: the evaluations' SIPs and the skill file are
// resources; a SIP reads as its Markdown, and a URI that names none is
// not found.
func TestMCPResources(t *testing.T) {
	t.Parallel()
	w := newWorld(t, backends["sqlite"](t))
	m := connectMCP(t, w.BaseURL, "")
	list, err := m.cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	uris := map[string]string{}
	for _, r := range list.Resources {
		uris[r.URI] = r.MIMEType
	}
	for _, want := range []string{"sip://skill.md", "sip://evaluations/SIP-2", "sip://evaluations/SIP-7"} {
		if uris[want] != "text/markdown" {
			t.Errorf("resources/list has no %s (Markdown): %v", want, uris)
		}
	}
	for uri, want := range map[string]string{
		"sip://evaluations/SIP-2": "# SIP-2: Proof of Agentic Work",
		"sip://evaluations/poaw":  "# SIP-2: Proof of Agentic Work",
		"sip://skill.md":          "name: sip",
	} {
		res, err := m.cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, want) {
			t.Errorf("%s: %v %+v", uri, err, res)
		}
	}
	for _, uri := range []string{"sip://evaluations/SIP-999", "sip://evaluations/..%2F..%2Fagents%2Fme", "sip://evaluations/a/b", "sip://other"} {
		if _, err := m.cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("%s was read", uri)
		}
	}
}

// TestMCPStartRegisters: start_evaluation's register argument through
// the Go MCP client against the whole server: without it start needs a
// registration, with it one call registers and starts, and register's
// refusals come through.
func TestMCPStartRegisters(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		m, _ := w.registerMCP(t, "mcp-starter")
		if e := m.call("start_evaluation", a{"ref": "poaw"}, nil); e == nil || e.ErrorDetail.Code != "not_registered" {
			t.Errorf("no arguments but ref: %+v, want not_registered", e)
		}
		if e := m.call("start_evaluation", a{"ref": "poaw", "register": false}, nil); e == nil || e.ErrorDetail.Code != "not_registered" {
			t.Errorf("register false: %+v, want not_registered", e)
		}
		if e := m.call("start_evaluation", a{"ref": "poaw", "register": "yes"}, nil); e == nil || e.ErrorDetail.Code != "validation_failed" || e.ErrorDetail.Field != "register" {
			t.Errorf("register a string: %+v, want validation_failed on register", e)
		}
		var st struct {
			Kind           string `json:"kind"`
			RegistrationID string `json:"registration_id"`
			Challenge      struct {
				ID     string `json:"id"`
				Values []int  `json:"values"`
			} `json:"challenge"`
		}
		m.must("start_evaluation", a{"ref": "SIP-2", "register": true}, &st)
		if st.Kind != "challenge" || st.RegistrationID == "" || len(st.Challenge.Values) == 0 {
			t.Errorf("start_evaluation with register: %+v", st)
		}
		if e := m.call("start_evaluation", a{"ref": "non-spamminess", "register": true}, nil); e == nil || e.ErrorDetail.Code != "claim_required" {
			t.Errorf("claimed-only evaluation: %+v, want claim_required", e)
		}
	})
}
