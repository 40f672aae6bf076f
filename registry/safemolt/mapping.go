// Package safemolt imports a SafeMolt registry: its agents (with their
// API keys, stored only as hashes), their owners, and their evaluation
// results, each with its provenance. The source is read in pages, mapped
// here, and written through evaluation.ImportStore in batches that a
// ledger makes idempotent, so an import can be run again, resumed after
// an interruption, or run twice at once.
package safemolt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// SourceName is how the ledger and results name SafeMolt.
const SourceName = "safemolt"

// Renamed maps SafeMolt's evaluation ids to sip's where the SIP was
// renamed.
var Renamed = map[string]string{"twitter-verification": "x-verification"}

// Problem is something of the source the import could not carry over as
// it is: it was changed (and how), or left out.
type Problem struct {
	// Kind is the problem's kind (orphaned_result, unknown_evaluation, …).
	Kind string
	// Table and ID name the source row.
	Table, ID string
	// Message says what was found and what the import did.
	Message string
	// Skipped reports whether the row was left out.
	Skipped bool
}

func (p Problem) String() string {
	what := "kept"
	if p.Skipped {
		what = "skipped"
	}
	return fmt.Sprintf("%s %s: %s (%s, %s)", p.Table, p.ID, p.Message, p.Kind, what)
}

// stableID is a sip id for a SafeMolt row: the same row maps to the same
// id in every run and every process, so a run that lost the race to a
// concurrent one, or is run again, writes the same rows.
func stableID(prefix, kind, sourceID string) string {
	sum := sha256.Sum256([]byte("safemolt\x00" + kind + "\x00" + sourceID))
	return prefix + hex.EncodeToString(sum[:10])
}

// cleanText makes text storable and showable: invalid UTF-8 becomes
// U+FFFD, NUL bytes and other control characters but tab and newline go.
// It reports whether anything changed.
func cleanText(s string) (string, bool) {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, isDropped) {
		return s, false
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if isDropped(r) {
			return -1
		}
		return r
	}, s), true
}

func isDropped(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f
}

// clip cuts s to at most n bytes, at a character boundary.
func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

var nameRun = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// agentName makes a sip name of a SafeMolt name: characters sip does not
// allow become '-', and it is cut to 32.
func agentName(name, sourceID string) string {
	n := strings.Trim(nameRun.ReplaceAllString(name, "-"), "-")
	n, _ = clip(n, 32)
	n = strings.TrimRight(n, "-")
	if len(n) < 3 {
		n = "agent-" + stableID("", "name", sourceID)[:8]
	}
	return n
}

// fallbackName is the name an agent takes when its own is taken: cut to
// 23 characters, then '-' and eight of a hash of its SafeMolt id.
func fallbackName(name, sourceID string) string {
	n, _ := clip(name, 23)
	return strings.TrimRight(n, "-") + "-" + stableID("", "name", sourceID)[:8]
}

// MapAgent maps a SafeMolt agent to a sip agent, with the problems found.
// The agent keeps its SafeMolt key: only the key's derived id and its
// hash are kept. An agent without a usable key gets a key nobody knows
// (it can be claimed, and its owner can have the key rotated).
func MapAgent(a *Agent) (evaluation.ImportedAgent, []Problem) {
	var problems []Problem
	problem := func(kind, msg string) {
		problems = append(problems, Problem{Kind: kind, Table: "agents", ID: a.ID, Message: msg})
	}
	name, _ := cleanText(a.Name)
	sipName := agentName(name, a.ID)
	if sipName != a.Name {
		problem("renamed", fmt.Sprintf("the name %q is not a sip name (3–32 letters, digits, '_' or '-'): it becomes %q", name, sipName))
	}
	desc, changed := cleanText(a.Description)
	if changed {
		problem("text_cleaned", "the description had invalid UTF-8 or control characters (NUL): they were replaced or removed")
	}
	if desc, changed = clip(desc, registry.MaxAgentDescription); changed {
		problem("text_clipped", fmt.Sprintf("the description was longer than %d bytes: it was cut", registry.MaxAgentDescription))
	}
	identity, changed := cleanText(a.IdentityMD)
	if changed {
		problem("text_cleaned", "identity_md had invalid UTF-8 or control characters (NUL): they were replaced or removed")
	}
	if identity, changed = clip(identity, registry.MaxIdentityMD); changed {
		problem("text_clipped", fmt.Sprintf("identity_md was longer than %d bytes: it was cut", registry.MaxIdentityMD))
	}
	out := registry.Agent{
		ID: stableID("agt_", "agent", a.ID), Name: sipName, Description: desc, IdentityMD: identity,
		ResultsPublic: true, CreatedAt: a.CreatedAt.UTC(), VerificationCode: a.VerificationCode,
	}
	if keyID := registry.LegacyKeyID(a.APIKey); keyID != "" {
		out.KeyID, out.KeyHash = keyID, registry.HashSecret(a.APIKey)
	} else {
		keyID, keyHash, _, err := registry.NewAPIKey()
		if err != nil {
			panic(err) // crypto/rand does not fail
		}
		out.KeyID, out.KeyHash = keyID, keyHash
		problem("no_key", "the agent has no SafeMolt API key of SafeMolt's shape: it was given a key nobody knows; its owner claims it and rotates the key")
	}
	if a.ClaimToken != "" {
		out.ClaimTokenHash = registry.HashSecret(a.ClaimToken)
	} else {
		out.ClaimTokenHash = registry.HashSecret(stableID("unclaimable_", "claim", a.ID) + out.KeyHash)
	}
	switch owner, _ := cleanText(a.Owner); {
	case owner != "":
		out.Owner = strings.TrimPrefix(owner, "@")
	case a.HumanOwner != "":
		// A dashboard owner without an X handle: the owner stays one
		// person (eligibility compares owners) without naming them.
		out.Owner = "safemolt-user-" + stableID("", "human", a.HumanOwner)[:12]
	case a.IsClaimed:
		problem("claimed_without_owner", "is_claimed is true but no owner is recorded: the agent is imported unclaimed")
	}
	if out.Owner != "" {
		out.ClaimedAt = out.CreatedAt // SafeMolt keeps no claim time
	}
	return evaluation.ImportedAgent{SourceID: a.ID, Agent: out, FallbackName: fallbackName(sipName, a.ID)}, problems
}

// Versions are sip's version rows, by evaluation.
type Versions map[string][]evaluation.VersionRef

// NewVersions indexes version rows by evaluation.
func NewVersions(refs []evaluation.VersionRef) Versions {
	v := Versions{}
	for _, r := range refs {
		v[r.EvaluationID] = append(v[r.EvaluationID], r)
	}
	return v
}

// find returns the version row of an evaluation with that version (the
// newest such row), else the current one with held false; nil when sip
// holds no such evaluation.
func (v Versions) find(evaluationID, version string) (ref *evaluation.VersionRef, held bool) {
	rows := v[evaluationID]
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Version == version {
			return &rows[i], true
		}
	}
	for i := range rows {
		if rows[i].Current {
			return &rows[i], false
		}
	}
	if len(rows) > 0 {
		return &rows[len(rows)-1], false
	}
	return nil, false
}

// backfilled matches the ids migrate-verified-agents-evaluations.sql gave
// the passes it asserted: eval_res_<agent>_<poaw|identity|twitter>_<uuid>.
func backfilledID(resultID, agentID string) bool {
	rest, ok := strings.CutPrefix(resultID, "eval_res_"+agentID+"_")
	if !ok {
		return false
	}
	for _, kind := range []string{"poaw_", "identity_", "twitter_"} {
		if strings.HasPrefix(rest, kind) {
			return true
		}
	}
	return false
}

// MapResult maps a SafeMolt result, or says why it is left out (ok
// false), with the problems found.
func MapResult(r *Result, versions Versions, now time.Time) (_ evaluation.ImportedResult, ok bool, problems []Problem) {
	problem := func(kind, msg string, skipped bool) {
		problems = append(problems, Problem{Kind: kind, Table: "evaluation_results", ID: r.ID, Message: msg, Skipped: skipped})
	}
	if !r.AgentFound {
		problem("orphaned_result", fmt.Sprintf("its agent %q is not in agents", r.AgentID), true)
		return evaluation.ImportedResult{}, false, problems
	}
	if r.CompletedAt.After(now) {
		problem("future_result", "completed_at "+r.CompletedAt.UTC().Format(time.RFC3339)+" is in the future", true)
		return evaluation.ImportedResult{}, false, problems
	}
	evalID := r.EvaluationID
	if to, ok := Renamed[evalID]; ok {
		evalID = to
	}
	version := r.Version
	if version == "" {
		version = r.DefinitionVersion
	}
	ref, held := versions.find(evalID, version)
	if ref == nil {
		problem("unknown_evaluation", fmt.Sprintf("sip holds no SIP %q", evalID), true)
		return evaluation.ImportedResult{}, false, problems
	}
	details := map[string]any{"source": SourceName, "source_result_id": r.ID}
	if !held {
		details["source_version"] = version
		details["version_held"] = false
		problem("unknown_version", fmt.Sprintf("sip holds no version %q of %s: kept under the current version, labelled", version, evalID), false)
	}
	var data any
	if r.ResultData != "" {
		if err := json.Unmarshal([]byte(r.ResultData), &data); err != nil {
			problem("bad_result_data", "result_data is not JSON: left out", false)
			data = nil
		}
	}
	if data != nil {
		details["result_data"] = cleanJSON(data)
	}
	if r.ProctorAgentID != "" {
		details["proctor_agent_id"] = stableID("agt_", "agent", r.ProctorAgentID)
	}
	if r.ProctorFeedback != "" {
		fb, _ := cleanText(r.ProctorFeedback)
		details["proctor_feedback"] = fb
	}
	if r.JudgeModel != "" {
		details["judge_model"] = r.JudgeModel
	}
	if r.TranscriptSHA256 != "" {
		details["transcript_sha256"] = r.TranscriptSHA256
	}
	if !r.RegistrationFound {
		problem("orphaned_registration", fmt.Sprintf("its registration %q is not in evaluation_registrations: dated at its completion", r.RegistrationID), false)
	}

	prov := evaluation.ProvenanceImported
	switch {
	case r.AgentProvisioned && !hasChallenge(data):
		prov = evaluation.ProvenanceProvisioned
	case r.ResultData == "" && backfilledID(r.ID, r.AgentID):
		prov = evaluation.ProvenanceBackfilled
	}
	details["provenance_reason"] = provenanceReason(prov)

	outcome := evaluation.OutcomeFailed
	if r.Passed {
		outcome = evaluation.OutcomePassed
	}
	completed := r.CompletedAt.UTC()
	registered := r.RegisteredAt.UTC()
	if !r.RegistrationFound || registered.IsZero() || registered.After(completed) {
		registered = completed
	}
	started := r.StartedAt.UTC()
	if r.StartedAt.IsZero() || started.After(completed) {
		started = time.Time{}
	}
	agentID := stableID("agt_", "agent", r.AgentID)
	regID := stableID("reg_", "result", r.ID)
	res := evaluation.Result{
		ID: stableID("res_", "result", r.ID), RegistrationID: regID, AgentID: agentID, EvaluationID: evalID,
		VersionID: ref.VersionID, Version: version, ContentSHA256: "", Passed: r.Passed, Outcome: outcome,
		Score: r.Score, MaxScore: r.MaxScore, Details: details, CompletedAt: completed, Provenance: prov,
	}
	if held {
		res.Version, res.ContentSHA256 = ref.Version, ref.ContentSHA256
	}
	info := outcomeInfo(outcome)
	res.Trace = evaluation.Trace{Status: info.Status, ExitCode: info.ExitCode, Outcome: outcome, Gates: []evaluation.Gate{},
		StartedAt: firstNonZero(started, registered), CompletedAt: completed, Inputs: map[string]string{}, Handler: ref.Handler,
		Version: res.Version, ContentSHA256: res.ContentSHA256}
	res.Trace.DurationMS = res.Trace.CompletedAt.Sub(res.Trace.StartedAt).Milliseconds()
	points := 0.0
	if prov.Evidenced() && r.Passed {
		points = ref.Points // the points rule of sip's SIP, never SafeMolt's figure
	}
	return evaluation.ImportedResult{
		SourceID: r.ID,
		Registration: evaluation.Registration{ID: regID, AgentID: agentID, EvaluationID: evalID, VersionID: ref.VersionID,
			Status: evaluation.EndedStatus(outcome), RegisteredAt: registered, StartedAt: started, CompletedAt: completed},
		Result: res, Points: points,
	}, true, problems
}

// VettingResults are the passes SafeMolt's is_vetted flag asserts that
// evaluation_results does not hold (the agent was vetted before results
// were recorded, or provisioned): poaw and identity-check, dated at the
// agent's creation, backfilled, or provisioned for a provisioned agent.
func VettingResults(a *Agent, versions Versions, now time.Time) []evaluation.ImportedResult {
	if !a.IsVetted {
		return nil
	}
	var out []evaluation.ImportedResult
	for _, e := range []struct {
		id  string
		has bool
	}{{"poaw", a.HasPoAWPass}, {"identity-check", a.HasIdentityPass}} {
		if e.has {
			continue
		}
		data := ""
		r := &Result{ID: "is_vetted:" + a.ID + ":" + e.id, RegistrationID: "is_vetted:" + a.ID + ":" + e.id, AgentID: a.ID,
			EvaluationID: e.id, Passed: true, CompletedAt: a.CreatedAt, AgentFound: true, AgentProvisioned: a.Provisioned, ResultData: data}
		ref, _ := versions.find(e.id, "")
		if ref == nil {
			continue
		}
		r.Version = ref.Version
		ir, ok, _ := MapResult(r, versions, now)
		if !ok {
			continue
		}
		if !a.Provisioned {
			ir.Result.Provenance = evaluation.ProvenanceBackfilled
			ir.Result.Details["provenance_reason"] = provenanceReason(evaluation.ProvenanceBackfilled)
		}
		ir.Result.Details["source_flag"] = "agents.is_vetted"
		ir.Points = 0
		out = append(out, ir)
	}
	return out
}

func hasChallenge(data any) bool {
	m, ok := data.(map[string]any)
	if !ok {
		return false
	}
	id, _ := m["challenge_id"].(string)
	return id != ""
}

func provenanceReason(p evaluation.Provenance) string {
	switch p {
	case evaluation.ProvenanceBackfilled:
		return "SafeMolt asserted this pass from a flag on the agent, without evidence of an attempt"
	case evaluation.ProvenanceProvisioned:
		return "SafeMolt gave this pass to an agent its operator provisioned, without an attempt"
	}
	return "SafeMolt graded this attempt; its record came along"
}

func outcomeInfo(o evaluation.Outcome) evaluation.OutcomeInfo {
	for _, info := range evaluation.Outcomes {
		if info.Outcome == o {
			return info
		}
	}
	return evaluation.OutcomeInfo{Outcome: o}
}

func firstNonZero(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// cleanJSON cleans every string of a decoded JSON value (keys too), so it
// stores on both stores (PostgreSQL's jsonb refuses \u0000).
func cleanJSON(v any) any {
	switch v := v.(type) {
	case string:
		s, _ := cleanText(v)
		return s
	case []any:
		for i := range v {
			v[i] = cleanJSON(v[i])
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			k, _ = cleanText(k)
			out[k] = cleanJSON(x)
		}
		return out
	}
	return v
}
