package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/safemolt"
)

const importAbout = `
Imports another registry into this one. The one source is SafeMolt:

  sip import safemolt --from postgres://…/safemolt [--plan]

reads SafeMolt's agents (their API keys are hashed at once: agents keep
using them, and no key is written in plain text anywhere), their owners,
and their evaluation results, each with its provenance: imported (SafeMolt
graded it and its record came along), backfilled (SafeMolt asserted it
without evidence) or provisioned (given to an agent its operator
provisioned). Points are recomputed from sip's SIPs, never copied.

--plan reads everything and prints what an import would write and every
problem found (duplicate names, orphaned results, unknown evaluations and
versions, text that is not clean UTF-8, agents without keys, results dated
in the future), and writes nothing.

The import is written in batches of --batch source rows, each in one
transaction, recorded in a ledger by SafeMolt's ids: run it again, after an
interruption or not, and it writes only what is missing; two imports at
once write everything once. The source is only read (in read-only
transactions); its schema is the search_path of --from. The SIPs must be
synced first (sip sync): results are matched to SIPs by id and version.

The database is --db, else SIP_DATABASE_URL, else the embedded SQLite file.
See docs/migrating-from-safemolt.md.

Exit status: 0 imported (problems are reported, not fatal), 64 usage, 69 a
database is unreachable, 70 the import failed (run it again to resume).`

func runImport(ctx context.Context, e env, args []string) int {
	flags := newFlagSet("import", "safemolt --from URL [--plan] [--db URL] [--batch N] [--format text|json]", importAbout)
	db := flags.String("db", "", "database URL (default: SIP_DATABASE_URL, else the embedded SQLite file)")
	from := flags.String("from", "", "the SafeMolt PostgreSQL database: postgres://…")
	plan := flags.Bool("plan", false, "report what would be imported and every problem; write nothing")
	batch := flags.Int("batch", 5000, "source rows per batch (one transaction each)")
	format := flags.String("format", "text", "report format: text or json")
	rest, code, ok := parseFlags(flags, e, args)
	if !ok {
		return code
	}
	switch {
	case len(rest) != 1 || rest[0] != "safemolt":
		fmt.Fprintln(e.stderr, "sip import: name the source: sip import safemolt --from postgres://…")
		return exitUsage
	case *from == "":
		fmt.Fprintln(e.stderr, "sip import: --from postgres://… names the SafeMolt database")
		return exitUsage
	case *batch < 1 || *batch > 10000:
		fmt.Fprintln(e.stderr, "sip import: --batch is 1 to 10000")
		return exitUsage
	case *format != "text" && *format != "json":
		fmt.Fprintf(e.stderr, "sip import: unknown --format %q (want text or json)\n", *format)
		return exitUsage
	}
	src, err := safemolt.Open(ctx, *from)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip import: %s: %v\n", describeDatabase(*from), err)
		return exitUnavailable
	}
	defer src.Close()
	st, code := openMigrated(ctx, e, "import", *db)
	if code != exitOK {
		return code
	}
	defer st.Close()
	target, ok := st.(evaluation.ImportStore)
	if !ok {
		fmt.Fprintln(e.stderr, "sip import: this store does not take imports")
		return exitInternal
	}
	im := &safemolt.Importer{Source: src, Target: target, BatchSize: *batch}
	if *format == "text" {
		last := time.Time{}
		im.Progress = func(p safemolt.Progress) {
			if time.Since(last) < time.Second {
				return
			}
			last = time.Now()
			fmt.Fprintf(e.stderr, "sip import: %s: %d read, %d agents, %d results, %d sessions, %d messages, %d transcripts written, %d already there\n",
				p.Phase, p.Read, p.Written.Agents, p.Written.Results, p.Written.Sessions, p.Written.Messages, p.Written.Transcripts, p.Written.Skipped)
		}
	}
	rep, err := im.Run(ctx, *plan)
	if rep != nil {
		writeImportReport(e, *format, rep)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "sip import: %v\nsip import: what was written stays; run the same command again to resume\n", err)
		return exitForStoreError(err)
	}
	return exitOK
}

func writeImportReport(e env, format string, r *safemolt.Report) {
	if format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(r)
		return
	}
	w := e.stdout
	verb := "imported"
	if r.Plan {
		verb = "plan (nothing written)"
	}
	fmt.Fprintf(w, "SafeMolt %s\n\nsource tables:\n", verb)
	for _, t := range safemolt.Tables {
		if n, ok := r.Tables[t]; ok {
			fmt.Fprintf(w, "  %-34s %d rows\n", t, n)
		}
	}
	fmt.Fprintf(w, "\nread %d agents, %d results, %d sessions, %d messages and %d certification jobs; %d records map to sip\n",
		r.Agents, r.Results, r.Sessions, r.Messages, r.Jobs, r.Mapped)
	fmt.Fprintln(w, "results by provenance:")
	for _, p := range evaluation.Provenances {
		if n := r.ByProvenance[p]; n > 0 {
			fmt.Fprintf(w, "  %-12s %d\n", p, n)
		}
	}
	if !r.Plan {
		fmt.Fprintf(w, "written: %d agents (%d renamed), %d results (%d earned points); %d already imported\n",
			r.Written.Agents, r.Written.Renamed, r.Written.Results, r.Written.Credited, r.Written.Skipped)
		fmt.Fprintf(w, "written: %d sessions, %d messages, %d certification transcripts; %d messages or transcripts whose session participant or result is not here\n",
			r.Written.Sessions, r.Written.Messages, r.Written.Transcripts, r.Written.Unmatched)
	}
	if len(r.ProblemCounts) == 0 {
		fmt.Fprintln(w, "\nno problems")
		return
	}
	fmt.Fprintln(w, "\nproblems:")
	for _, k := range r.Kinds() {
		fmt.Fprintf(w, "  %-24s %d\n", k, r.ProblemCounts[k])
	}
	fmt.Fprintln(w)
	for _, p := range r.Problems {
		fmt.Fprintln(w, "  "+p.String())
	}
	if n := sum(r.ProblemCounts); n > len(r.Problems) {
		fmt.Fprintf(w, "  … and %d more\n", n-len(r.Problems))
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
