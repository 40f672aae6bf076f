package api_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/registrytest"
)

var sunset = time.Date(2027, 3, 31, 0, 0, 0, 0, time.UTC)

func legacyWorld(t *testing.T, s registry.Store) *world {
	t.Helper()
	return newWorldWith(t, s, func(c *api.Config) { c.LegacyVetting = api.LegacyVetting{Sunset: sunset} })
}

// importedAgent imports an agent as sip import safemolt does, with its
// SafeMolt key, and the given passes, and returns the key.
func importedAgent(t *testing.T, w *world, name string, passes ...evaluation.Provenance) (key string, a *registry.Agent) {
	t.Helper()
	st := w.store.(registrytest.ImportFullStore)
	key = "safemolt_" + strings.ReplaceAll(name, "-", "") + "0123456789abcdefghijklm"
	agent := registry.Agent{ID: "agt_imp_" + name, Name: name, ResultsPublic: true, CreatedAt: w.clock.Now().Add(-time.Hour),
		KeyID: registry.LegacyKeyID(key), KeyHash: registry.HashSecret(key), ClaimTokenHash: registry.HashSecret("c" + key)}
	b := &evaluation.ImportBatch{Source: "safemolt", At: w.clock.Now(), Agents: []evaluation.ImportedAgent{{SourceID: name, Agent: agent}}}
	refs, err := st.ImportVersions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range passes {
		eval := []string{"poaw", "identity-check"}[i]
		var ref evaluation.VersionRef
		for _, r := range refs {
			if r.EvaluationID == eval && r.Current {
				ref = r
			}
		}
		at := agent.CreatedAt
		id := name + "_" + eval
		b.Results = append(b.Results, evaluation.ImportedResult{SourceID: id,
			Registration: evaluation.Registration{ID: "reg_" + id, AgentID: agent.ID, EvaluationID: eval, VersionID: ref.VersionID,
				Status: evaluation.RegCompleted, RegisteredAt: at, CompletedAt: at},
			Result: evaluation.Result{ID: "res_" + id, RegistrationID: "reg_" + id, AgentID: agent.ID, EvaluationID: eval,
				VersionID: ref.VersionID, Version: ref.Version, ContentSHA256: ref.ContentSHA256, Passed: true, Outcome: evaluation.OutcomePassed,
				CompletedAt: at, Provenance: p, Details: map[string]any{"source": "safemolt"}, Trace: evaluation.Trace{Status: "success", Gates: []evaluation.Gate{}, Inputs: map[string]string{}}}})
	}
	if _, err := st.ImportBatch(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	return key, &agent
}

type vettingStart struct {
	Success       bool   `json:"success"`
	AlreadyVetted bool   `json:"already_vetted"`
	ChallengeID   string `json:"challenge_id"`
	FetchURL      string `json:"fetch_url"`
	ExpiresAt     string `json:"expires_at"`
}

type vettingChallenge struct {
	Values []int  `json:"values"`
	Nonce  string `json:"nonce"`
}

type vettingDone struct {
	Success bool `json:"success"`
	Agent   struct {
		ID       string `json:"id"`
		IsVetted bool   `json:"is_vetted"`
	} `json:"agent"`
	IdentityReceived bool   `json:"identity_received"`
	ResultID         string `json:"result_id"`
}

type legacyErr struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Hint    string `json:"hint"`
}

// skillHash is the answer as SafeMolt's skill.md computes it:
// SHA256(JSON.stringify(values sorted ascending) + nonce).
func skillHash(ch vettingChallenge) string {
	sorted := slices.Clone(ch.Values)
	slices.Sort(sorted)
	b, _ := json.Marshal(sorted)
	sum := sha256.Sum256(append(b, ch.Nonce...))
	return hex.EncodeToString(sum[:])
}

func (w *world) vettingStart(t *testing.T, key string) (vettingStart, *http.Response) {
	t.Helper()
	var st vettingStart
	resp := w.Do("POST", "/api/v1/agents/vetting/start", nil, http.Header{"Authorization": {"Bearer " + key}}, &st)
	return st, resp
}

func (w *world) vettingFetch(t *testing.T, id string) vettingChallenge {
	t.Helper()
	var ch vettingChallenge
	if resp := w.Do("GET", "/api/v1/agents/vetting/challenge/"+id, nil, nil, &ch); resp.StatusCode != 200 {
		t.Fatalf("fetch challenge: %d", resp.StatusCode)
	}
	return ch
}

func (w *world) vettingComplete(t *testing.T, key, id, hash, identity string, out any) int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"challenge_id": id, "hash": hash, "identity_md": identity})
	return w.Do("POST", "/api/v1/agents/vetting/complete", strings.NewReader(string(body)), bearer(key), out).StatusCode
}

func page(t *testing.T, w *world, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", w.BaseURL+path, nil)
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	return string(b)
}

// TestLegacyVettingAsSkillMDSays: an agent imported from SafeMolt, with
// its SafeMolt key, vets as SafeMolt's skill.md tells it to, and its
// results are sip's own, on sip's pages.
func TestLegacyVettingAsSkillMDSays(t *testing.T) {
	t.Parallel()
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := legacyWorld(t, open(t))
			key, agent := importedAgent(t, w, "molty")

			st, resp := w.vettingStart(t, key)
			if resp.StatusCode != 200 || !st.Success || st.ChallengeID == "" || !strings.HasSuffix(st.FetchURL, "/api/v1/agents/vetting/challenge/"+st.ChallengeID) {
				t.Fatalf("start: %d %+v", resp.StatusCode, st)
			}
			if resp.Header.Get("Deprecation") != "@0" || resp.Header.Get("Sunset") != "Wed, 31 Mar 2027 00:00:00 GMT" {
				t.Errorf("headers Deprecation %q Sunset %q", resp.Header.Get("Deprecation"), resp.Header.Get("Sunset"))
			}
			// Step 2 fetches without a key, as skill.md's curl does.
			ch := w.vettingFetch(t, st.ChallengeID)
			if len(ch.Values) != 30 || ch.Nonce == "" {
				t.Fatalf("challenge = %+v", ch)
			}
			var done vettingDone
			if code := w.vettingComplete(t, key, st.ChallengeID, strings.ToUpper(skillHash(ch)), "# Who I Am\n\nMolty.", &done); code != 200 {
				t.Fatalf("complete: %d", code)
			}
			if !done.Success || !done.Agent.IsVetted || !done.IdentityReceived || done.Agent.ID != agent.ID {
				t.Errorf("complete = %+v, want vetted with its identity", done)
			}
			// The result is sip's: graded, on the API and the pages.
			var got struct {
				Result struct {
					Passed     bool   `json:"passed"`
					Provenance string `json:"provenance"`
				} `json:"result"`
			}
			w.Get("/api/v1/results/"+done.ResultID, &got)
			if !got.Result.Passed || got.Result.Provenance != "graded" {
				t.Errorf("result = %+v, want a graded pass", got.Result)
			}
			if html := page(t, w, "/results/"+done.ResultID); !strings.Contains(html, "graded here") || !strings.Contains(html, "Proof of Agentic Work") {
				t.Errorf("the result page does not show a graded pass of PoAW")
			}
			if html := page(t, w, "/agents/molty"); !strings.Contains(html, "Identity Check") || !strings.Contains(html, "Proof of Agentic Work") {
				t.Errorf("the agent's page does not show both passes")
			}
			if a, err := w.store.(registry.AgentStore).AgentByID(t.Context(), agent.ID); err != nil || a.IdentityMD != "# Who I Am\n\nMolty." {
				t.Errorf("identity = %q, %v; want the one sent", a.IdentityMD, err)
			}
			// Starting again: vetted.
			if st, _ := w.vettingStart(t, key); !st.AlreadyVetted {
				t.Errorf("start again = %+v, want already_vetted", st)
			}
			resp = w.Do("GET", "/metrics", nil, nil, nil)
			b, _ := io.ReadAll(resp.Body)
			if !strings.Contains(string(b), `sip_legacy_vetting_requests_total{endpoint="complete",outcome="ok"} 1`) {
				t.Errorf("metrics lack the legacy calls:\n%s", b)
			}
		})
	}
}

func TestLegacyVettingRefusals(t *testing.T) {
	t.Parallel()
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := legacyWorld(t, open(t))
			key, _ := importedAgent(t, w, "refused")
			other := w.agent("other-agent")
			want := func(what string, code, wantCode int, e legacyErr, wantErr string) {
				t.Helper()
				if code != wantCode || e.Success || e.Error != wantErr {
					t.Errorf("%s: %d %+v, want %d %q", what, code, e, wantCode, wantErr)
				}
			}
			var e legacyErr
			st, _ := w.vettingStart(t, key)
			ch := w.vettingFetch(t, st.ChallengeID)

			want("missing challenge_id", w.vettingComplete(t, key, "", "x", "", &e), 400, e, "challenge_id is required")
			e = legacyErr{}
			want("oversized identity", w.vettingComplete(t, key, st.ChallengeID, skillHash(ch), strings.Repeat("a", registry.MaxIdentityMD+1), &e), 400, e, "identity_md too large")
			e = legacyErr{}
			want("unknown challenge", w.vettingComplete(t, key, "ch_nope", skillHash(ch), "", &e), 404, e, "Challenge not found")
			e = legacyErr{}
			want("another agent's challenge", w.vettingComplete(t, other.key, st.ChallengeID, skillHash(ch), "", &e), 403, e, "Challenge mismatch")
			e = legacyErr{}
			want("no key", w.Do("POST", "/api/v1/agents/vetting/complete", strings.NewReader(`{}`), jsonHeader, &e).StatusCode, 401, e, "missing or invalid API key")

			// A wrong hash fails the attempt and uses the challenge.
			e = legacyErr{}
			want("wrong hash", w.vettingComplete(t, key, st.ChallengeID, strings.Repeat("0", 64), "", &e), 400, e, "Invalid hash")
			e = legacyErr{}
			want("reused challenge", w.vettingComplete(t, key, st.ChallengeID, skillHash(ch), "", &e), 410, e, "Challenge expired")
			e = legacyErr{}
			if code := w.Do("GET", "/api/v1/agents/vetting/challenge/"+st.ChallengeID, nil, nil, &e).StatusCode; code != 410 {
				t.Errorf("fetching a used challenge: %d, want 410", code)
			}
			e = legacyErr{}
			if code := w.Do("GET", "/api/v1/agents/vetting/challenge/ch_nope", nil, nil, &e).StatusCode; code != 404 {
				t.Errorf("fetching an unknown challenge: %d, want 404", code)
			}

			// An expired challenge.
			st, _ = w.vettingStart(t, key)
			ch = w.vettingFetch(t, st.ChallengeID)
			w.clock.Advance(time.Minute)
			e = legacyErr{}
			want("expired challenge", w.vettingComplete(t, key, st.ChallengeID, skillHash(ch), "", &e), 410, e, "Challenge expired")

			// The failed attempt is a graded result, on the record.
			var list struct {
				Results []struct {
					Outcome    string `json:"outcome"`
					Provenance string `json:"provenance"`
				} `json:"results"`
			}
			w.Get("/api/v1/evaluations/poaw/results?agent_id=agt_imp_refused&provenance=graded", &list)
			if len(list.Results) == 0 || list.Results[len(list.Results)-1].Outcome != "failed" {
				t.Errorf("graded results = %+v, want the failed attempt", list.Results)
			}
			if resp := w.Do("GET", "/api/v1/evaluations/poaw/results?provenance=asserted", nil, nil, nil); resp.StatusCode != 400 {
				t.Errorf("an unknown provenance: %d, want 400", resp.StatusCode)
			}

			// After the sunset: gone.
			w.clock.Advance(sunset.Sub(w.clock.Now()))
			e = legacyErr{}
			_, resp := w.vettingStart(t, key)
			if resp.StatusCode != 410 {
				t.Errorf("after the sunset: %d, want 410", resp.StatusCode)
			}
		})
	}
}

// TestLegacyVettingBackfilledAgentVetsAgain: passes SafeMolt asserted
// without evidence do not make an agent vetted here; it takes the
// challenge, and its graded pass is what counts.
func TestLegacyVettingBackfilledAgentVetsAgain(t *testing.T) {
	t.Parallel()
	w := legacyWorld(t, backends["sqlite"](t))
	key, agent := importedAgent(t, w, "backfilled-one", evaluation.ProvenanceBackfilled, evaluation.ProvenanceProvisioned)
	st, resp := w.vettingStart(t, key)
	if resp.StatusCode != 200 || st.AlreadyVetted || st.ChallengeID == "" {
		t.Fatalf("start = %d %+v, want a challenge", resp.StatusCode, st)
	}
	// Its backfilled pass earns no credential, and is labelled.
	var list struct {
		Results []struct {
			ID         string `json:"id"`
			Provenance string `json:"provenance"`
		} `json:"results"`
	}
	w.Get("/api/v1/evaluations/poaw/results?provenance=backfilled&agent_id="+agent.ID, &list)
	if len(list.Results) != 1 {
		t.Fatalf("backfilled results = %+v, want one", list.Results)
	}
	if resp := w.Do("GET", "/api/v1/results/"+list.Results[0].ID+"/credential", nil, nil, nil); resp.StatusCode < 400 {
		t.Errorf("a backfilled pass's credential: %d, want a refusal", resp.StatusCode)
	}
	if html := page(t, w, "/results/"+list.Results[0].ID); !strings.Contains(html, "without evidence") {
		t.Error("the backfilled result's page does not say it was asserted without evidence")
	}
	if html := page(t, w, "/evaluations/poaw/stats"); !strings.Contains(html, "asserted without evidence (backfilled or provisioned) is left out") {
		t.Errorf("the statistics page does not say the backfilled pass is left out:\n%s", html)
	}
	ch := w.vettingFetch(t, st.ChallengeID)
	var done vettingDone
	if code := w.vettingComplete(t, key, st.ChallengeID, skillHash(ch), "", &done); code != 200 {
		t.Fatalf("complete: %d", code)
	}
	if done.Agent.IsVetted || done.IdentityReceived {
		t.Errorf("complete with an empty identity = %+v: PoAW passes, the identity check does not (sip's rule)", done)
	}
}

// TestImportedPassCredentialSaysSo: an imported pass earns a credential
// that says, in a signed field of its subject, that another registry
// graded it; the registry's own verifier accepts it.
func TestImportedPassCredentialSaysSo(t *testing.T) {
	t.Parallel()
	const base = "https://registry.test"
	w := newWorldWith(t, backends["sqlite"](t), func(c *api.Config) { c.Issuer, c.BaseURL = testIssuer(t, base), base })
	_, agent := importedAgent(t, w, "imported-one", evaluation.ProvenanceImported)
	var cred map[string]any
	if resp := w.Get("/api/v1/results/res_imported-one_poaw/credential", &cred); resp.StatusCode != 200 {
		t.Fatalf("an imported pass's credential: %d", resp.StatusCode)
	}
	subject, _ := cred["credentialSubject"].(map[string]any)
	if subject["provenance"] != "imported" || subject["provenanceSource"] != "safemolt" {
		t.Errorf("credentialSubject = %v, want provenance imported from safemolt", subject)
	}
	if desc, _ := cred["description"].(string); !strings.Contains(desc, agent.Name) || !strings.Contains(desc, "Another registry (safemolt) graded the attempt") {
		t.Errorf("description = %q, want it to say another registry graded it", desc)
	}
	var verdict struct {
		Verified bool `json:"verified"`
	}
	raw, _ := json.Marshal(cred)
	if resp := w.Do("POST", "/api/v1/credentials/verify", bytes.NewReader(raw), jsonHeader, &verdict); resp.StatusCode != 200 || !verdict.Verified {
		t.Errorf("verify the imported pass's credential: %d %+v, want verified", resp.StatusCode, verdict)
	}
}

// TestLegacyVettingOff: without a sunset the endpoints are not there.
func TestLegacyVettingOff(t *testing.T) {
	t.Parallel()
	w := newWorld(t, backends["sqlite"](t))
	key, _ := importedAgent(t, w, "off-agent")
	if _, resp := w.vettingStart(t, key); resp.StatusCode != 404 && resp.StatusCode != 405 {
		t.Errorf("start with the endpoints off: %d, want 404 or 405", resp.StatusCode)
	}
	// The SafeMolt key still authenticates on sip's own endpoints.
	var me struct {
		Agent struct {
			Name string `json:"name"`
		} `json:"agent"`
	}
	if resp := w.Do("GET", "/api/v1/agents/me", nil, bearer(key), &me); resp.StatusCode != 200 || me.Agent.Name != "off-agent" {
		t.Errorf("GET /agents/me with a SafeMolt key: %d %+v", resp.StatusCode, me)
	}
	if resp := w.Do("GET", "/api/v1/agents/me", nil, bearer(key+"x"), nil); resp.StatusCode != 401 {
		t.Errorf("GET /agents/me with a wrong SafeMolt key: %d, want 401", resp.StatusCode)
	}
}

// TestLegacyVettingCompleteOnce: the same answer sent many times at once
// passes once; the others find the challenge used.
func TestLegacyVettingCompleteOnce(t *testing.T) {
	t.Parallel()
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := legacyWorld(t, open(t))
			key, _ := importedAgent(t, w, "racer")
			st, _ := w.vettingStart(t, key)
			hash := skillHash(w.vettingFetch(t, st.ChallengeID))
			codes := make([]int, 8)
			var wg sync.WaitGroup
			for i := range codes {
				wg.Go(func() { codes[i] = w.vettingComplete(t, key, st.ChallengeID, hash, "# Racer", nil) })
			}
			wg.Wait()
			passed := 0
			for _, c := range codes {
				switch c {
				case 200:
					passed++
				case 410:
				default:
					t.Errorf("a concurrent complete answered %d, want 200 or 410", c)
				}
			}
			if passed != 1 {
				t.Errorf("%d of 8 concurrent completes passed (%v), want 1", passed, codes)
			}
		})
	}
}

// TestStatsAssertedSwitch: statistics and leaderboards leave out results
// another registry asserted without evidence unless asked
// (?asserted=include), on the page and in the API alike.
func TestStatsAssertedSwitch(t *testing.T) {
	t.Parallel()
	w := legacyWorld(t, backends["sqlite"](t))
	_, backfilled := importedAgent(t, w, "asserted-one", evaluation.ProvenanceBackfilled)
	importedAgent(t, w, "evidenced-one", evaluation.ProvenanceImported)
	type figures struct {
		IncludesAsserted bool `json:"includes_asserted"`
		Asserted         int  `json:"asserted"`
		Attempts         int  `json:"attempts"`
		Passes           int  `json:"passes"`
		First            []struct {
			AgentID string `json:"agent_id"`
		} `json:"first"`
	}
	onBoard := func(f figures) bool {
		for _, l := range f.First {
			if l.AgentID == backfilled.ID {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		query              string
		attempts           int
		includes, onBoard  bool
		pageSays, pageLink string
	}{
		{"", 1, false, false, "is left out", `/evaluations/SIP-2/stats?asserted=include">Include it`},
		{"?asserted=exclude", 1, false, false, "is left out", `?asserted=include">Include it`},
		{"?asserted=include", 2, true, true, "is counted here", `/stats">Leave it out`},
	} {
		t.Run("asserted"+tc.query, func(t *testing.T) {
			var f figures
			if resp := w.Get("/api/v1/evaluations/poaw/stats"+tc.query, &f); resp.StatusCode != 200 {
				t.Fatalf("stats%s: %d", tc.query, resp.StatusCode)
			}
			if f.Asserted != 1 || f.Attempts != tc.attempts || f.IncludesAsserted != tc.includes || onBoard(f) != tc.onBoard {
				t.Errorf("stats%s = %+v, want 1 asserted, %d attempts, includes %v, the backfilled agent on the board %v", tc.query, f, tc.attempts, tc.includes, tc.onBoard)
			}
			html := page(t, w, "/evaluations/poaw/stats"+tc.query)
			if !strings.Contains(html, tc.pageSays) || !strings.Contains(html, tc.pageLink) {
				t.Errorf("the stats page%s does not say %q with %q", tc.query, tc.pageSays, tc.pageLink)
			}
			if strings.Contains(html, "asserted-one") != tc.onBoard {
				t.Errorf("the stats page%s names the backfilled agent: %v, want %v", tc.query, !tc.onBoard, tc.onBoard)
			}
		})
	}
	if resp := w.Do("GET", "/api/v1/evaluations/poaw/stats?asserted=maybe", nil, nil, nil); resp.StatusCode != 400 {
		t.Errorf("?asserted=maybe: %d, want 400", resp.StatusCode)
	}
}

// TestLegacyVettingAfterAnExpiredChallenge: SafeMolt's vetting after a
// challenge expired: a late completion is refused with 410, and start
// again gives a new challenge (with or without the late completion).
func TestLegacyVettingAfterAnExpiredChallenge(t *testing.T) {
	t.Parallel()
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := legacyWorld(t, open(t))
			key, _ := importedAgent(t, w, "late")
			st, _ := w.vettingStart(t, key)
			ch := w.vettingFetch(t, st.ChallengeID)
			w.clock.Advance(time.Minute)
			var e legacyErr
			code := w.vettingComplete(t, key, st.ChallengeID, skillHash(ch), "", &e)
			if code != 410 {
				t.Errorf("complete late: %d %+v, want 410", code, e)
			}
			st2, resp := w.vettingStart(t, key)
			if resp.StatusCode != 200 || st2.ChallengeID == "" || st2.ChallengeID == st.ChallengeID {
				t.Errorf("start after an expired challenge: %d %+v", resp.StatusCode, st2)
			}
			ch2 := w.vettingFetch(t, st2.ChallengeID)
			var done vettingDone
			if code := w.vettingComplete(t, key, st2.ChallengeID, skillHash(ch2), "# late", &done); code != 200 {
				t.Errorf("complete the second: %d", code)
			}
			// Start with no complete, after expiry.
			key2, _ := importedAgent(t, w, "idle")
			s1, _ := w.vettingStart(t, key2)
			w.clock.Advance(time.Minute)
			s2, resp := w.vettingStart(t, key2)
			if resp.StatusCode != 200 || s2.ChallengeID == "" || s2.ChallengeID == s1.ChallengeID {
				t.Errorf("start again after an unanswered challenge expired: %d %+v, want a new challenge", resp.StatusCode, s2)
			}
		})
	}
}
