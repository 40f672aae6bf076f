package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
)

const tracesAbout = `
Writes the execution record of every graded attempt as JSON Lines, oldest
first: one object per result with its status, exit code, gates, timings
and hashed inputs (never raw answers or secrets).

  sip traces export [--since 2026-11-01T00:00:00Z] [--db URL] > traces.jsonl`

// traceLine is one line of the export.
type traceLine struct {
	TS                time.Time        `json:"ts"`
	Event             string           `json:"event"`
	ResultID          string           `json:"result_id"`
	AgentID           string           `json:"agent_id"`
	EvaluationID      string           `json:"evaluation_id"`
	EvaluationVersion string           `json:"evaluation_version"`
	ContentSHA256     string           `json:"content_sha256"`
	Passed            bool             `json:"passed"`
	Score             *float64         `json:"score"`
	MaxScore          *float64         `json:"max_score"`
	Trace             evaluation.Trace `json:"trace"`
}

func runTraces(ctx context.Context, e env, args []string) int {
	if len(args) == 0 || args[0] != "export" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
			// Its one subcommand's help, with its flags.
			args = []string{"export", "--help"}
		} else {
			fmt.Fprintln(e.stderr, "Usage: sip traces export [--since T] [--db URL]")
			return exitUsage
		}
	}
	flags := newFlagSet("traces export", "[--since T] [--db URL]", tracesAbout)
	since := flags.String("since", "", "only results completed at or after this RFC 3339 time")
	db := flags.String("db", "", "database URL (default: SIP_DATABASE_URL, else the embedded SQLite file)")
	rest, code, ok := parseFlags(flags, e, args[1:])
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(e.stderr, "sip traces export: unexpected argument %q\n", rest[0])
		return exitUsage
	}
	var from time.Time
	if *since != "" {
		t, err := time.Parse(time.RFC3339, *since)
		if err != nil {
			fmt.Fprintf(e.stderr, "sip traces export: --since %q is not an RFC 3339 time\n", *since)
			return exitUsage
		}
		from = t
	}
	st, code := openMigrated(ctx, e, "traces export", *db)
	if code != exitOK {
		return code
	}
	defer st.Close()
	results, err := st.ResultsSince(ctx, from)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip traces export: %v\n", err)
		return exitForStoreError(err)
	}
	w := bufio.NewWriter(e.stdout)
	enc := json.NewEncoder(w)
	for _, r := range results {
		enc.Encode(traceLine{TS: r.CompletedAt, Event: "evaluation_result", ResultID: r.ID, AgentID: r.AgentID, EvaluationID: r.EvaluationID,
			EvaluationVersion: r.Version, ContentSHA256: r.ContentSHA256, Passed: r.Passed, Score: r.Score, MaxScore: r.MaxScore, Trace: r.Trace})
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(e.stderr, "sip traces export: %v\n", err)
		return exitInternal
	}
	return exitOK
}
