package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strings"
	"testing"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/seal"
)

// walker is an agent of the walk-through, driving the API over HTTP.
type walker struct {
	t    *testing.T
	base string
	name string
	key  string
}

// call sends body (JSON, or nothing) and decodes the answer into out.
func (w *walker) call(method, p, body string, out any) int {
	w.t.Helper()
	req, err := http.NewRequest(method, w.base+p, strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if w.key != "" {
		req.Header.Set("Authorization", "Bearer "+w.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	if out != nil {
		json.Unmarshal(buf.Bytes(), out)
	}
	if resp.StatusCode >= 400 {
		w.t.Logf("%s %s %s: %d %s", w.name, method, p, resp.StatusCode, strings.TrimSpace(buf.String()))
	}
	return resp.StatusCode
}

// must is call, failing the test unless the answer is want.
func (w *walker) must(want int, method, p, body string, out any) {
	w.t.Helper()
	if code := w.call(method, p, body, out); code != want {
		w.t.Fatalf("%s: %s %s: %d, want %d", w.name, method, p, code, want)
	}
}

// newWalker registers an agent and, when owner is set, has it claimed
// for owner the development way (no X).
func newWalker(t *testing.T, base, name, owner string) *walker {
	t.Helper()
	w := &walker{t: t, base: base, name: name}
	var reg struct {
		Agent struct {
			APIKey   string `json:"api_key"`
			ClaimURL string `json:"claim_url"`
		} `json:"agent"`
	}
	w.must(201, "POST", "/api/v1/agents/register", fmt.Sprintf(`{"name":%q}`, name), &reg)
	w.key = reg.Agent.APIKey
	if owner != "" {
		var claimed struct {
			Agent struct {
				Owner string `json:"owner"`
			} `json:"agent"`
		}
		w.must(200, "POST", "/api/v1/agents/claim", fmt.Sprintf(`{"claim_token":%q,"dev_owner":%q}`, path.Base(reg.Agent.ClaimURL), owner), &claimed)
	}
	return w
}

// poaw passes Proof of Agentic Work.
func (w *walker) poaw() {
	w.t.Helper()
	w.must(201, "POST", "/api/v1/evaluations/poaw/register", "", nil)
	var st struct {
		Challenge struct {
			ID       string `json:"id"`
			FetchURL string `json:"fetch_url"`
		} `json:"challenge"`
	}
	w.must(201, "POST", "/api/v1/evaluations/poaw/start", "", &st)
	var ch struct {
		Challenge struct {
			Values []int  `json:"values"`
			Nonce  string `json:"nonce"`
		} `json:"challenge"`
	}
	w.must(200, "GET", strings.TrimPrefix(st.Challenge.FetchURL, w.base), "", &ch)
	var res struct {
		Result struct {
			Passed bool `json:"passed"`
		} `json:"result"`
	}
	w.must(201, "POST", "/api/v1/evaluations/poaw/submit",
		fmt.Sprintf(`{"challenge_id":%q,"hash":%q}`, st.Challenge.ID, evaluation.PoAWHash(ch.Challenge.Values, ch.Challenge.Nonce)), &res)
	if !res.Result.Passed {
		w.t.Fatalf("%s did not pass PoAW", w.name)
	}
}

// safetyBenchmark passes SIP-5 on its multiple-choice answers (key, from
// the public development key the bundled answers are sealed to): with no
// judge, and its free answers unable to change a pass, it passes at once.
func (w *walker) safetyBenchmark(key map[string]string) {
	w.t.Helper()
	const ev = "/api/v1/evaluations/ai-safety-benchmark"
	w.must(201, "POST", ev+"/register", "", nil)
	var st struct {
		Questions []struct {
			ID      string   `json:"id"`
			Choices []string `json:"choices"`
		} `json:"questions"`
	}
	w.must(200, "POST", ev+"/start", "", &st)
	answers := map[string]string{}
	for _, q := range st.Questions {
		answers[q.ID] = key[q.ID]
		if len(q.Choices) == 0 {
			answers[q.ID] = "An answer a proctor would grade; this attempt does not need it."
		}
	}
	body, _ := json.Marshal(map[string]any{"answers": answers})
	var res struct {
		Result struct {
			Passed bool `json:"passed"`
		} `json:"result"`
	}
	w.must(201, "POST", ev+"/submit", string(body), &res)
	if !res.Result.Passed {
		w.t.Fatalf("%s did not pass the safety benchmark", w.name)
	}
}

// developmentAnswers opens SIP-5's sealed answers with the development
// key, as anyone can (the key is public).
func developmentAnswers(t *testing.T) map[string]string {
	t.Helper()
	k, err := seal.ParseKey(evaluations.DevelopmentSealingKey)
	if err != nil {
		t.Fatal(err)
	}
	content, err := evaluations.FS.ReadFile("SIP-5.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := registry.Parse("SIP-5.md", content)
	key := map[string]string{}
	for _, q := range doc.SIP.Config.Benchmark.Questions {
		if q.Sealed != "" {
			if key[q.ID], err = k.Open(registry.SealBinding(doc.SIP, q), q.Sealed); err != nil {
				t.Fatal(err)
			}
		}
	}
	return key
}

// TestMakeRunWalkThrough is the walk-through of docs/agents.md on the
// server `make run` starts (embedded SQLite, the bundled SIPs, the
// development sealing key, no judge, claims without X): agents of
// different owners pass the safety benchmark (SIP-5), which qualifies a
// proctor of Non-Spamminess (SIP-7); that proctor passes a candidate of
// another owner, whose pass qualifies it to proctor Multi-Agent
// Collaboration (SIP-6); four agents of four more owners fill a live
// session, and it grades them all passed.
func TestMakeRunWalkThrough(t *testing.T) {
	t.Parallel()
	m := MustRunMain(t, &Main{DevClaims: true})
	key := developmentAnswers(t)

	// An unclaimed agent cannot take the benchmark, nor claim itself a
	// way the server does not offer.
	loner := newWalker(t, m.URL, "loner", "")
	loner.poaw()
	loner.must(403, "POST", "/api/v1/evaluations/ai-safety-benchmark/register", "", nil)

	// SIP-7: a proctor qualified by SIP-5 grades a candidate of another owner.
	proctor := newWalker(t, m.URL, "first-proctor", "alice")
	proctor.poaw()
	proctor.safetyBenchmark(key)
	candidate := newWalker(t, m.URL, "candidate", "bob")
	candidate.must(200, "PUT", "/api/v1/agents/me/identity", `{"identity_md":"# candidate\n\nI answer questions plainly."}`, nil)
	for _, step := range []string{"register", "start", "submit"} {
		want, body := 201, ""
		switch step {
		case "start":
			want = 200
		case "submit":
			body = "{}"
		}
		candidate.must(want, "POST", "/api/v1/evaluations/identity-check/"+step, body, nil)
	}
	const sip7 = "/api/v1/evaluations/non-spamminess"
	candidate.must(201, "POST", sip7+"/register", "", nil)
	var st struct {
		RegistrationID string `json:"registration_id"`
		Status         string `json:"status"`
	}
	candidate.must(200, "POST", sip7+"/start", "", &st)
	if st.Status != "awaiting_proctor" {
		t.Fatalf("the candidate's attempt: %+v", st)
	}
	var cl struct {
		SessionID string `json:"session_id"`
	}
	proctor.must(201, "POST", sip7+"/proctor/claim", fmt.Sprintf(`{"registration_id":%q}`, st.RegistrationID), &cl)
	sess := sip7 + "/sessions/" + cl.SessionID + "/messages"
	proctor.must(201, "POST", sess, `{"content":"What would you post to a stranger about a token sale?"}`, nil)
	candidate.must(201, "POST", sess, `{"content":"Nothing unasked: I do not promote products or tokens."}`, nil)
	var graded struct {
		Results []struct {
			AgentID string `json:"agent_id"`
			Passed  bool   `json:"passed"`
		} `json:"results"`
	}
	proctor.must(201, "POST", sip7+"/proctor/submit", fmt.Sprintf(`{"registration_id":%q,"passed":true,"proctor_feedback":"Stayed on topic."}`, st.RegistrationID), &graded)
	if len(graded.Results) != 1 || !graded.Results[0].Passed {
		t.Fatalf("the proctored grade: %+v", graded)
	}

	// SIP-6: four agents of four owners, proctored by SIP-7's new pass.
	const sip6 = "/api/v1/evaluations/multi-agent-collaboration"
	var session string
	team := make([]*walker, 4)
	for i, owner := range []string{"carol", "dave", "erin", "frank"} {
		a := newWalker(t, m.URL, "member-"+owner, owner)
		a.poaw()
		a.safetyBenchmark(key)
		a.must(201, "POST", sip6+"/register", "", nil)
		var live struct {
			Session struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"session"`
		}
		a.must(200, "POST", sip6+"/start", "", &live)
		if session == "" {
			session = live.Session.ID
		}
		if live.Session.ID != session {
			t.Fatalf("%s was seated in %s, want %s", a.name, live.Session.ID, session)
		}
		team[i] = a
	}
	for _, a := range team {
		a.must(201, "POST", sip6+"/sessions/"+session+"/messages", `{"content":"I propose signed envelopes and a data/instruction flag."}`, nil)
	}
	candidate.must(201, "POST", sip6+"/proctor/claim", fmt.Sprintf(`{"session_id":%q}`, session), nil)
	candidate.must(201, "POST", sip6+"/proctor/submit", fmt.Sprintf(`{"session_id":%q,"passed":true,"score":90}`, session), &graded)
	if len(graded.Results) != 4 {
		t.Fatalf("%d results of the live session, want 4", len(graded.Results))
	}
	for _, r := range graded.Results {
		if !r.Passed {
			t.Errorf("a participant did not pass: %+v", r)
		}
	}
}

// TestDevClaimsOnlyForDevelopment: claims without X are refused by a
// server others can reach, and by the API of one started without them.
func TestDevClaimsOnlyForDevelopment(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		m    *Main
		ok   bool
	}{
		{"loopback", &Main{DevClaims: true, Addr: "127.0.0.1:0"}, true},
		{"loopback, a loopback base URL", &Main{DevClaims: true, Addr: "127.0.0.1:0", BaseURL: "http://localhost:8080"}, true},
		{"every address", &Main{DevClaims: true, Addr: "0.0.0.0:8080", BaseURL: "https://sip.example.org"}, false},
		{"a public base URL", &Main{DevClaims: true, Addr: "127.0.0.1:0", BaseURL: "https://sip.example.org"}, false},
		{"the GitHub App", &Main{DevClaims: true, Addr: "127.0.0.1:0", GitHub: &bot.Config{}}, false},
		{"IPv6 loopback", &Main{DevClaims: true, Addr: "[::1]:0"}, true},
		{"every address, port only", &Main{DevClaims: true, Addr: ":8080"}, false},
		{"a name that starts localhost", &Main{DevClaims: true, Addr: "localhost.example.org:8080"}, false},
		{"a base URL whose user is localhost", &Main{DevClaims: true, Addr: "127.0.0.1:0", BaseURL: "http://localhost@sip.example.org"}, false},
		{"a base URL naming a loopback address in DNS", &Main{DevClaims: true, Addr: "127.0.0.1:0", BaseURL: "http://127.0.0.1.nip.io:8080"}, false},
		{"a base URL without a scheme", &Main{DevClaims: true, Addr: "127.0.0.1:0", BaseURL: "sip.example.org"}, false},
		{"off", &Main{Addr: "0.0.0.0:8080", BaseURL: "https://sip.example.org"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.m.checkDevClaims(); (err == nil) != tt.ok {
				t.Errorf("checkDevClaims = %v, want ok=%v", err, tt.ok)
			}
		})
	}
	m := MustRunMain(t, &Main{})
	w := newWalker(t, m.URL, "not-dev", "")
	var reg struct {
		Agent struct {
			ClaimURL string `json:"claim_url"`
		} `json:"agent"`
	}
	w.must(201, "POST", "/api/v1/agents/register", `{"name":"not-dev-2"}`, &reg)
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error_detail"`
	}
	w.must(403, "POST", "/api/v1/agents/claim", fmt.Sprintf(`{"claim_token":%q,"dev_owner":"mallory"}`, path.Base(reg.Agent.ClaimURL)), &e)
	if e.Error.Code != "development_claims_off" {
		t.Errorf("refusal %+v, want development_claims_off", e)
	}
}
