package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sipregistry/sip/registry"
)

const resultsAbout = `
Maintainers' actions on results.

  sip results revoke ID --reason TEXT [--db URL]
      Revoke a result, e.g. one a colluding proctor graded: it stays in the
      record, but no longer counts as a pass (prerequisites, points, pass
      counts), and its credential reads as revoked in the registry's status
      list from the next time a verifier fetches it. Revoking again changes
      nothing; the first reason stays.`

func runResults(ctx context.Context, e env, args []string) int {
	if len(args) == 0 || args[0] != "revoke" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
			// Its one subcommand's help, with its flags.
			args = []string{"revoke", "--help"}
		} else {
			fmt.Fprintln(e.stderr, "Usage: sip results revoke ID --reason TEXT [--db URL]")
			return exitUsage
		}
	}
	flags := newFlagSet("results revoke", "ID --reason TEXT [--db URL]", resultsAbout)
	reason := flags.String("reason", "", "why the result is revoked (required; shown with the result)")
	db := flags.String("db", "", "database URL (default: SIP_DATABASE_URL, else the embedded SQLite file)")
	rest, code, ok := parseFlags(flags, e, args[1:])
	if !ok {
		return code
	}
	if len(rest) != 1 || strings.TrimSpace(*reason) == "" {
		fmt.Fprintln(e.stderr, "sip results revoke: name one result and give --reason (say why: it is shown with the result)")
		return exitUsage
	}
	st, code := openMigrated(ctx, e, "results revoke", *db)
	if code != exitOK {
		return code
	}
	defer st.Close()
	err := st.RevokeResult(ctx, rest[0], "revoked by the registry's maintainers: "+strings.TrimSpace(*reason), time.Now())
	if errors.Is(err, registry.ErrNotFound) {
		fmt.Fprintf(e.stderr, "sip results revoke: no result %q (the id is in the result's URL: /results/ID)\n", rest[0])
		return exitNoInput
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "sip results revoke: %v\n", err)
		return exitForStoreError(err)
	}
	r, err := st.Result(ctx, rest[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "sip results revoke: %v\n", err)
		return exitForStoreError(err)
	}
	fmt.Fprintf(e.stdout, "revoked %s (%s, %s) at %s: %s\n", r.ID, r.EvaluationID, r.AgentID, r.RevokedAt.Format(time.RFC3339), r.RevokedReason)
	return exitOK
}
