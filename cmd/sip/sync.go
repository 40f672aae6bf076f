package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/gitrev"
	"github.com/sipregistry/sip/registry/report"
)

const syncAbout = `
Loads every SIP of a folder, or of one commit of a git repository, into the
registry database, in one transaction. The whole set is validated first
(the rules of docs/rules.md, plus the edit rules of each changed SIP
against the version the registry holds); a set with errors is not applied.
A SIP whose file disappeared is kept and marked deprecated. Syncing the same
commit again changes nothing.

--repo is a local path (read in place) or a URL (fetched one commit deep);
SIP_GIT_TOKEN, when set, authenticates HTTPS fetches.

The database is --db, else SIP_DATABASE_URL, else the embedded SQLite file
$XDG_DATA_HOME/sip/registry.db (~/.local/share/sip/registry.db):
postgres://… selects PostgreSQL, sqlite:PATH or a path selects SQLite.

Exit status: 0 applied or nothing to do, 65 the SIPs are invalid, 66 the
source does not exist, 69 the database is unreachable, 78 bad configuration.`

func runSync(ctx context.Context, e env, args []string) int {
	flags := newFlagSet("sync", "[--db URL] (--dir DIR | --repo PATH_OR_URL [--ref REF]) [--path evaluations]", syncAbout)
	db := flags.String("db", "", "database URL (default: SIP_DATABASE_URL, else the embedded SQLite file)")
	dir := flags.String("dir", "", "folder of SIP files")
	repo := flags.String("repo", "", "git repository: a local path or a URL")
	ref := flags.String("ref", "", "branch, tag or commit to sync (default HEAD)")
	path := flags.String("path", "evaluations", "folder of SIPs inside the repository")
	format := flags.String("format", "text", "report format: text or json")
	rest, code, ok := parseFlags(flags, e, args)
	if !ok {
		return code
	}
	switch {
	case len(rest) > 0:
		fmt.Fprintf(e.stderr, "sip sync: unexpected argument %q\n", rest[0])
		return exitUsage
	case (*dir == "") == (*repo == ""):
		fmt.Fprintln(e.stderr, "sip sync: give exactly one of --dir or --repo")
		return exitUsage
	case *ref != "" && *repo == "":
		fmt.Fprintln(e.stderr, "sip sync: --ref goes with --repo")
		return exitUsage
	case *format != "text" && *format != "json":
		fmt.Fprintf(e.stderr, "sip sync: unknown --format %q (want text or json)\n", *format)
		return exitUsage
	}

	var src registry.Source
	var err error
	if *dir != "" {
		src, err = dirSource(*dir)
	} else {
		src, err = gitrev.Fetch(ctx, gitrev.FetchOptions{Repo: *repo, Ref: *ref, Dir: *path, Token: e.getenv("SIP_GIT_TOKEN")})
	}
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errNotFolder):
		fmt.Fprintf(e.stderr, "sip sync: %v\n", err)
		return exitNoInput
	case errors.Is(err, gitrev.ErrUnknownRevision):
		fmt.Fprintf(e.stderr, "sip sync: %v\n", err)
		return exitUsage
	case errors.Is(err, gitrev.ErrRepository):
		fmt.Fprintf(e.stderr, "sip sync: %v\n", err)
		return exitNoInput
	case err != nil:
		fmt.Fprintf(e.stderr, "sip sync: %v\n", err)
		return exitInternal
	}

	st, code := openMigrated(ctx, e, "sync", *db)
	if code != exitOK {
		return code
	}
	defer st.Close()
	rep, err := registry.Sync(ctx, st, src, time.Now())
	var invalid *registry.ValidationError
	switch {
	case errors.Is(err, registry.ErrEmptySource):
		fmt.Fprintf(e.stderr, "sip sync: %v\n", err)
		return exitNoInput
	case errors.As(err, &invalid):
		writeSyncReport(e, *format, rep)
		fmt.Fprintf(e.stderr, "sip sync: not applied: the SIPs at %s have errors\n", src.Name)
		return exitData
	case err != nil:
		fmt.Fprintf(e.stderr, "sip sync: %v\n", err)
		return exitForStoreError(err)
	}
	writeSyncReport(e, *format, rep)
	return exitOK
}

var errNotFolder = errors.New("not a folder")

// dirSource reads the SIPs of a folder; paths are spelled evaluations/….
func dirSource(dir string) (registry.Source, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return registry.Source{}, err
	}
	if !info.IsDir() {
		return registry.Source{}, fmt.Errorf("%s is not a folder: %w", dir, errNotFolder)
	}
	files, err := registry.ReadFS(os.DirFS(dir), ".", "evaluations")
	if err != nil {
		return registry.Source{}, err
	}
	return registry.Source{Files: files, Name: "dir " + dir}, nil
}

func writeSyncReport(e env, format string, r *registry.SyncReport) {
	if format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(r)
		return
	}
	if errs, _ := registry.Count(r.Problems); errs > 0 {
		files := len(r.Added) + len(r.Changed) + len(r.Unchanged)
		report.Write(e.stdout, "text", report.Result{Files: files, Problems: r.Problems}, sipTool())
		return
	}
	if r.UpToDate {
		fmt.Fprintf(e.stdout, "synced %s: the registry is already at this commit; nothing to change\n", r.Source)
		return
	}
	state := "applied"
	if !r.Applied {
		state = "nothing to change"
	}
	fmt.Fprintf(e.stdout, "synced %s: %s\n", r.Source, state)
	for _, part := range []struct {
		label string
		ids   []string
	}{{"added", r.Added}, {"changed", r.Changed}, {"deprecated", r.Deprecated}, {"unchanged", r.Unchanged}} {
		fmt.Fprintf(e.stdout, "  %-12s %d", part.label+":", len(part.ids))
		if len(part.ids) > 0 && part.label != "unchanged" {
			ids := part.ids
			more := ""
			if len(ids) > 12 {
				ids, more = ids[:12], fmt.Sprintf(" and %d more", len(part.ids)-12)
			}
			fmt.Fprintf(e.stdout, "  %s%s", strings.Join(ids, ", "), more)
		}
		fmt.Fprintln(e.stdout)
	}
}
