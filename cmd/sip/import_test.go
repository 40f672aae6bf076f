package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
)

// safemoltSource makes a SafeMolt database of the import's fixture in a
// fresh schema and returns its URL.
func safemoltSource(t *testing.T) string {
	t.Helper()
	fixture, err := os.ReadFile(filepath.Join("..", "..", "registry", "safemolt", "testdata", "safemolt.sql"))
	if err != nil {
		t.Fatal(err)
	}
	url := postgrestest.URL(t)
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(t.Context(), string(fixture)); err != nil {
		t.Fatal(err)
	}
	return url
}

func TestImportSafeMolt(t *testing.T) {
	t.Parallel()
	from := safemoltSource(t)
	db := filepath.Join(t.TempDir(), "registry.db")
	if code, out, errOut := runSip(t, "sync", "--db", db, "--dir", bundled); code != exitOK {
		t.Fatalf("sync: %d\n%s%s", code, out, errOut)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		out  []string
	}{
		{"no source named", []string{"import", "--from", from, "--db", db}, exitUsage, []string{"name the source"}},
		{"unknown source", []string{"import", "moltbook", "--from", from, "--db", db}, exitUsage, []string{"name the source"}},
		{"no --from", []string{"import", "safemolt", "--db", db}, exitUsage, []string{"--from"}},
		{"bad batch", []string{"import", "safemolt", "--from", from, "--db", db, "--batch", "0"}, exitUsage, []string{"--batch"}},
		{"unreachable source", []string{"import", "safemolt", "--from", "postgres://postgres@127.0.0.1:1/x?connect_timeout=1", "--db", db}, exitUnavailable, []string{"sip import"}},
		{"not SafeMolt", []string{"import", "safemolt", "--from", postgrestest.URL(t), "--db", db}, exitUnavailable, []string{"no agents table"}},
		{"plan", []string{"import", "safemolt", "--from", from, "--db", db, "--plan"}, exitOK,
			[]string{"plan (nothing written)", "read 8 agents, 15 results, 6 sessions, 11 messages and 5 certification jobs", "backfilled", "provisioned", "orphaned_result", "future_result", "unknown_evaluation", "no_key"}},
		{"import", []string{"import", "safemolt", "--from", from, "--db", db, "--batch", "3"}, exitOK,
			[]string{"written: 8 agents (1 renamed), 15 results", "0 already imported", "written: 2 sessions, 5 messages, 1 certification transcripts; 3 messages"}},
		{"again", []string{"import", "safemolt", "--from", from, "--db", db}, exitOK,
			[]string{"written: 0 agents (0 renamed), 0 results (0 earned points); 31 already imported"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runSip(t, tt.args...)
			if code != tt.code {
				t.Errorf("got exit %d, want %d\n%s%s", code, tt.code, out, errOut)
				return
			}
			for _, want := range tt.out {
				if !strings.Contains(out+errOut, want) {
					t.Errorf("got output without %q, want it:\n%s%s", want, out, errOut)
				}
			}
		})
	}
}

// TestImportedAgentVetsOnTheServer is the move end to end: import a
// SafeMolt database, serve it with the legacy endpoints on, and an agent
// whose vetting SafeMolt only asserted vets with its old key as
// SafeMolt's skill.md says; its pass is sip's, on sip's pages.
func TestImportedAgentVetsOnTheServer(t *testing.T) {
	t.Parallel()
	from := safemoltSource(t)
	db := filepath.Join(t.TempDir(), "registry.db")
	for _, args := range [][]string{{"sync", "--db", db, "--dir", bundled}, {"import", "safemolt", "--from", from, "--db", db}} {
		if code, out, errOut := runSip(t, args...); code != exitOK {
			t.Fatalf("%v: %d\n%s%s", args, code, out, errOut)
		}
	}
	m := MustRunMain(t, &Main{DatabaseURL: db, LegacyVetting: api.LegacyVetting{Sunset: time.Now().AddDate(1, 0, 0)}})
	call := func(method, url, key, body string, out any) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatalf("%s %s: %v", method, url, err)
			}
		}
		return resp.StatusCode
	}
	const key = "safemolt_bobkey0123456789abcdefghij"
	var me struct {
		Agent struct{ ID, Name string } `json:"agent"`
	}
	if code := call("GET", m.URL+"/api/v1/agents/me", key, "", &me); code != 200 || me.Agent.Name != "bob" {
		t.Fatalf("GET /agents/me with bob's SafeMolt key: %d %+v", code, me)
	}
	var st struct {
		ChallengeID string `json:"challenge_id"`
		FetchURL    string `json:"fetch_url"`
	}
	if code := call("POST", m.URL+"/api/v1/agents/vetting/start", key, "", &st); code != 200 || st.ChallengeID == "" {
		t.Fatalf("start: %d %+v (bob's passes are backfilled: it must get a challenge)", code, st)
	}
	var ch struct {
		Values []int  `json:"values"`
		Nonce  string `json:"nonce"`
	}
	if code := call("GET", st.FetchURL, "", "", &ch); code != 200 {
		t.Fatalf("fetch %s: %d", st.FetchURL, code)
	}
	slices.Sort(ch.Values)
	sorted, _ := json.Marshal(ch.Values)
	sum := sha256.Sum256(append(sorted, ch.Nonce...))
	body, _ := json.Marshal(map[string]string{"challenge_id": st.ChallengeID, "hash": hex.EncodeToString(sum[:]), "identity_md": "# Bob\n\nStill Bob."})
	var done struct {
		Agent struct {
			IsVetted bool `json:"is_vetted"`
		} `json:"agent"`
		ResultID string `json:"result_id"`
	}
	if code := call("POST", m.URL+"/api/v1/agents/vetting/complete", key, string(body), &done); code != 200 || !done.Agent.IsVetted {
		t.Fatalf("complete: %d %+v", code, done)
	}
	var list struct {
		Results []struct{ Provenance string } `json:"results"`
	}
	call("GET", m.URL+"/api/v1/evaluations/poaw/results?agent_id="+me.Agent.ID, "", "", &list)
	var got []string
	for _, r := range list.Results {
		got = append(got, r.Provenance)
	}
	if !slices.Equal(got, []string{"graded", "backfilled"}) {
		t.Errorf("bob's PoAW results, newest first: %v, want graded then backfilled", got)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", m.URL+"/results/"+done.ResultID, nil)
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "graded here") {
		t.Errorf("the result page: %d, want bob's graded pass", resp.StatusCode)
	}
}

// TestImportedTranscriptsAreTheAgentsAlone: the certification transcript
// and SafeMolt's record of an imported result are read by the agent that
// answered, with its old SafeMolt key, and by nobody else: anyone, or
// another imported agent.
func TestImportedTranscriptsAreTheAgentsAlone(t *testing.T) {
	t.Parallel()
	from := safemoltSource(t)
	db := filepath.Join(t.TempDir(), "registry.db")
	for _, args := range [][]string{{"sync", "--db", db, "--dir", bundled}, {"import", "safemolt", "--from", from, "--db", db}} {
		if code, out, errOut := runSip(t, args...); code != exitOK {
			t.Fatalf("%v: %d\n%s%s", args, code, out, errOut)
		}
	}
	m := MustRunMain(t, &Main{DatabaseURL: db})
	call := func(path, key string, out any) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), "GET", m.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
		}
		return resp.StatusCode
	}
	const ada, bob = "safemolt_adakey0123456789abcdefghij", "safemolt_bobkey0123456789abcdefghij"
	var me struct {
		Agent struct{ ID string } `json:"agent"`
	}
	if code := call("/api/v1/agents/me", ada, &me); code != 200 {
		t.Fatalf("GET /agents/me with ada's SafeMolt key: %d", code)
	}
	const ev = "/api/v1/evaluations/honest-uncertainty-certification"
	var list struct {
		Results []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	if code := call(ev+"/results?agent_id="+me.Agent.ID, ada, &list); code != 200 || len(list.Results) == 0 {
		t.Fatalf("ada's imported certification results: %d %+v", code, list)
	}
	id := list.Results[0].ID
	var own struct {
		Transcript json.RawMessage `json:"transcript"`
	}
	if code := call(ev+"/results/"+id+"/transcript", ada, &own); code != 200 || !strings.Contains(string(own.Transcript), "Nobody can know") {
		t.Errorf("ada reads her imported transcript: %d %s", code, own.Transcript)
	}
	for who, key := range map[string]string{"anyone": "", "another imported agent": bob} {
		if code := call(ev+"/results/"+id+"/transcript", key, nil); code != http.StatusForbidden {
			t.Errorf("%s reads ada's imported transcript: %d, want 403", who, code)
		}
		var r struct {
			Details map[string]any `json:"details"`
		}
		if code := call("/api/v1/results/"+id, key, &r); code != 200 || r.Details["source"] != "safemolt" {
			t.Errorf("%s reads ada's imported result: %d %v, want 200 with its source", who, code, r.Details)
		}
		for _, k := range []string{"result_data", "proctor_feedback", "judge_model"} {
			if _, ok := r.Details[k]; ok {
				t.Errorf("%s reads details[%s] of ada's imported result", who, k)
			}
		}
	}
}
