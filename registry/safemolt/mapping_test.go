package safemolt_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/safemolt"
)

// PostgreSQL refuses NUL in text and a UTF8 database refuses invalid
// UTF-8, but a SafeMolt database created as SQL_ASCII holds both: the
// mapping cleans them whatever the source.
func TestMapAgentCleansText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   safemolt.Agent
		kind string
	}{
		{"nul in description", safemolt.Agent{ID: "a1", Name: "nul", Description: "be\x00fore", APIKey: "safemolt_abcdefghijklmnopqrstuvwx"}, "text_cleaned"},
		{"invalid utf-8 in identity", safemolt.Agent{ID: "a2", Name: "bad", IdentityMD: "ok \xff\xfe end", APIKey: "safemolt_abcdefghijklmnopqrstuvwy"}, "text_cleaned"},
		{"invalid utf-8 in name", safemolt.Agent{ID: "a3", Name: "na\xffme\x00", APIKey: "safemolt_abcdefghijklmnopqrstuvwz"}, "renamed"},
		{"oversized identity", safemolt.Agent{ID: "a4", Name: "big", IdentityMD: strings.Repeat("é", registry.MaxIdentityMD), APIKey: "safemolt_abcdefghijklmnopqrstuvxa"}, "text_clipped"},
		{"no key", safemolt.Agent{ID: "a5", Name: "nokey"}, "no_key"},
		{"too short a name", safemolt.Agent{ID: "a6", Name: "🤖", APIKey: "safemolt_abcdefghijklmnopqrstuvxb"}, "renamed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, problems := safemolt.MapAgent(&tc.in)
			a := got.Agent
			for _, s := range []string{a.Name, a.Description, a.IdentityMD, got.FallbackName} {
				if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
					t.Errorf("mapped text %q is not clean", s)
				}
			}
			if err := registry.CheckAgentName(a.Name); err != nil {
				t.Errorf("name: %v", err)
			}
			if err := registry.CheckAgentName(got.FallbackName); err != nil {
				t.Errorf("fallback name: %v", err)
			}
			if len(a.IdentityMD) > registry.MaxIdentityMD || len(a.KeyID) != 12 || len(a.KeyHash) != 64 || len(a.ClaimTokenHash) != 64 {
				t.Errorf("agent = %+v, out of bounds", a)
			}
			var kinds []string
			for _, p := range problems {
				kinds = append(kinds, p.Kind)
			}
			if !strings.Contains(strings.Join(kinds, ","), tc.kind) {
				t.Errorf("problems %v, want %s", kinds, tc.kind)
			}
		})
	}
}

func TestMapResultCleansData(t *testing.T) {
	t.Parallel()
	versions := safemolt.NewVersions([]evaluation.VersionRef{{EvaluationID: "poaw", VersionID: 1, Version: "1.0.0", Current: true, Points: 10, Handler: "poaw_handler"}})
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &safemolt.Result{ID: "r1", AgentID: "a1", EvaluationID: "poaw", Passed: true, CompletedAt: at, AgentFound: true,
		ResultData: `{"note": "a\u0000b", "k\u0000": ["x\u0000"]}`, ProctorFeedback: "fine\x00\xff", Version: "1.0.0"}
	got, ok, _ := safemolt.MapResult(r, versions, at.Add(time.Hour))
	if !ok {
		t.Fatal("result left out")
	}
	data := got.Result.Details["result_data"].(map[string]any)
	if data["note"] != "ab" || data["k"].([]any)[0] != "x" || got.Result.Details["proctor_feedback"] != "fine\uFFFD" {
		t.Errorf("details = %v, want NUL removed and invalid UTF-8 replaced", got.Result.Details)
	}
	if got.Result.Of() != evaluation.ProvenanceImported || got.Points != 10 || got.Result.Version != "1.0.0" {
		t.Errorf("result = %+v points %v, want imported under 1.0.0 with sip's points", got.Result, got.Points)
	}
	// Unknown evaluation, future, orphan: left out.
	for _, bad := range []safemolt.Result{
		{ID: "r2", AgentID: "a1", EvaluationID: "nope", CompletedAt: at, AgentFound: true},
		{ID: "r3", AgentID: "a1", EvaluationID: "poaw", CompletedAt: at.Add(48 * time.Hour), AgentFound: true},
		{ID: "r4", AgentID: "gone", EvaluationID: "poaw", CompletedAt: at},
	} {
		if _, ok, problems := safemolt.MapResult(&bad, versions, at.Add(time.Hour)); ok || len(problems) == 0 || !problems[0].Skipped {
			t.Errorf("result %s kept (problems %v), want it left out", bad.ID, problems)
		}
	}
}
