package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/gitrev"
	"github.com/sipregistry/sip/registry/report"
	"github.com/sipregistry/sip/registry/seal"
)

const validateAbout = `
Checks SIP files against every rule in docs/rules.md and prints every
problem found. PATH is a SIP file or a folder of them (default evaluations);
folders are read recursively, and every .md file except README.md is a SIP.

With --base REV the edit rules also apply: each SIP is compared with the
same path at git revision REV (sip and id never change, a changed SIP
raises version and updated_at, status only moves forward, no SIP file is
deleted).

The text format shows the first 20 problems of each rule in full and
counts the rest in one line per rule (--verbose shows all); --quiet shows
errors only. JSON and SARIF always hold every problem.

With --sealing-key FILE (or SIP_SEALING_KEY_FILE) each sealed benchmark
answer must also open with the registry's key, for its own SIP and
question as written, to one of its choices, as the App's check run
requires. Whoever holds the key is told which answer fails and why; the
App's check, which anyone opening a pull request reads, says only that
the SIP's sealed answers must be sealed again. Nothing opened is printed.

Exit status: 0 valid (warnings allowed), 65 errors found, 66 a PATH does
not exist or holds no SIP, 64 usage error, 78 --base or --sealing-key cannot be read,
70 internal error.`

// sipTool describes this program in SARIF logs.
func sipTool() report.Tool {
	return report.Tool{
		Name:           "sip",
		Version:        sipVersion(),
		InformationURI: "https://github.com/sipregistry/sip",
		RulesURI:       "https://github.com/sipregistry/sip/blob/main/docs/rules.md",
	}
}

func runValidate(ctx context.Context, e env, args []string) int {
	fs := newFlagSet("validate", "[--format text|json|sarif|github] [--base REV] [--color auto|always|never] [--verbose|--quiet] [PATH...] | --list-rules", validateAbout)
	format := fs.String("format", "text", "output format: "+strings.Join(report.Formats, ", "))
	base := fs.String("base", "", "git revision to apply the edit rules against, e.g. origin/main")
	keyFile := fs.String("sealing-key", e.getenv("SIP_SEALING_KEY_FILE"), "the registry's sealing key: sealed answers must open with it to one of their choices (default $SIP_SEALING_KEY_FILE)")
	color := fs.String("color", "auto", "colour the text format: auto (on a terminal, unless NO_COLOR is set), always or never")
	config := fs.String("config", "", "the repository's policy file, for its `rules` (severity per rule) and `sections` (default "+policy.Path+" when it exists)")
	verbose := fs.Bool("verbose", false, "text format: show every problem (by default each rule's first "+strconv.Itoa(report.GroupShown)+" are shown and the rest counted)")
	quiet := fs.Bool("quiet", false, "text and github formats: show errors only (JSON and SARIF always hold every problem)")
	listRules := fs.Bool("list-rules", false, "list every rule (id, severity, scope, what it requires) and exit; --format json for a list of objects")
	paths, code, ok := parseFlags(fs, e, args)
	if !ok {
		return code
	}
	fail := failer(e, "sip validate", *format == "json")
	if !oneOf(*format, report.Formats) {
		return fail(exitUsage, "Use one of: "+strings.Join(report.Formats, ", ")+".", "unknown --format %q", *format)
	}
	useColor, ok := colorFor(e, *color)
	if !ok {
		return fail(exitUsage, "Use auto, always or never.", "unknown --color %q", *color)
	}
	if *listRules {
		if len(paths) > 0 {
			return fail(exitUsage, "Run sip validate --list-rules alone.", "--list-rules takes no paths")
		}
		return writeRules(e, *format)
	}
	if len(paths) == 0 {
		paths = []string{"evaluations"}
	}

	// Collections are rare from the start (see setMemoryBudget): a run on
	// one file then ends before the heap left by the libraries' package
	// initialisation (about 3 MB) would start one.
	debug.SetGCPercent(400)
	set, err := readSet(paths)
	if err != nil {
		return fail(exitNoInput, "Name a SIP file or a folder of them (default evaluations); sip new writes a first one.", "%v", err)
	}
	files := set.files
	setMemoryBudget(files)
	opts := registry.Options{Dir: set.dir}
	if set.hasContext() || *base != "" {
		// Only problems about what was named are reported: files read
		// beside it, and with --base SIPs deleted since, may have others.
		opts.Reported = set.reported
	}
	if err := applyConfig(*config, &opts); err != nil {
		return fail(exitConfig, "Fix the policy file (sip policy check FILE says where), or name another with --config.", "%v", err)
	}
	links := set.linkChecker()
	opts.Body.Exists = links.exists
	opts.Body.Root = set.root
	if *base != "" {
		snap, err := baseSnapshot(set.read, *base)
		if err != nil {
			return fail(exitConfig, "Name a revision of the repository the paths are in, e.g. --base origin/main (git fetch it first).", "--base: %v", err)
		}
		opts.Base = snap
	}
	if *keyFile != "" {
		k, err := seal.LoadKeyFile(*keyFile)
		if err != nil {
			return fail(exitConfig, "Name the registry's age identity file (sip seal --new-key FILE makes one), or leave it out.", "--sealing-key: %v", err)
		}
		opts.Key, opts.ShowSealed = k, true
	}
	problems := registry.ValidateFiles(files, opts)
	sources := make(map[string][]byte, len(files))
	for _, f := range files {
		sources[f.Path] = f.Content
	}
	if err := report.Write(e.stdout, *format, report.Result{Files: set.named, Problems: problems, Sources: sources, Color: useColor, Verbose: *verbose, Quiet: *quiet}, sipTool()); err != nil {
		fmt.Fprintf(e.stderr, "sip validate: %v\n", err)
		return exitInternal
	}
	if note := links.notice(); note != "" {
		fmt.Fprintf(e.stderr, "sip validate: note: %s\n", note)
	}
	if errs, _ := registry.Count(problems); errs > 0 {
		return exitData
	}
	return exitOK
}

// applyConfig reads the policy file named (or the repository's, when the
// current folder has one) and applies its rules and sections.
func applyConfig(name string, opts *registry.Options) error {
	explicit := name != ""
	if !explicit {
		name = policy.Path
	}
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	p, err := policy.Parse(data)
	if err != nil {
		return errors.New(strings.ReplaceAll(err.Error(), policy.Path, name))
	}
	p.Apply(opts)
	return nil
}

// failer reports a command's failure: a line and the next step on
// standard error, or, for --format json, one JSON object on standard
// output ({"error", "hint", "exit_code"}) so that a program reading the
// output always gets JSON.
func failer(e env, cmd string, asJSON bool) func(code int, hint, format string, args ...any) int {
	return func(code int, hint, format string, args ...any) int {
		msg := fmt.Sprintf(format, args...)
		if asJSON {
			json.NewEncoder(e.stdout).Encode(struct {
				Error    string `json:"error"`
				Hint     string `json:"hint"`
				ExitCode int    `json:"exit_code"`
			}{msg, hint, code})
			return code
		}
		fmt.Fprintf(e.stderr, "%s: %s\n", cmd, msg)
		if hint != "" {
			fmt.Fprintf(e.stderr, "  %s\n", hint)
		}
		return code
	}
}

// readPaths reads the SIP files under every path, each file once.
func readPaths(paths []string) ([]registry.File, error) {
	var files []registry.File
	seen := map[string]bool{}
	for _, p := range paths {
		got, err := readPath(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%s does not exist", p)
		case err != nil:
			return nil, err
		case len(got) == 0:
			return nil, fmt.Errorf("%s holds no SIP file (*.md other than README.md)", p)
		}
		for _, f := range got {
			if !seen[f.Path] {
				seen[f.Path] = true
				files = append(files, f)
			}
		}
	}
	return files, nil
}

// readPath reads one file, or every SIP file below a folder.
func readPath(p string) ([]registry.File, error) {
	p = filepath.ToSlash(filepath.Clean(p))
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return registry.ReadFS(os.DirFS(p), ".", p)
	}
	return registry.ReadFS(os.DirFS(filepath.Dir(p)), filepath.Base(p), p)
}

// baseSnapshot reads the same paths at git revision rev.
func baseSnapshot(paths []string, rev string) (*registry.Snapshot, error) {
	r, err := gitrev.Open(paths[0], rev)
	if err != nil {
		return nil, err
	}
	var files []registry.File
	for _, p := range paths {
		got, err := r.Files(filepath.ToSlash(filepath.Clean(p)))
		if err != nil {
			return nil, err
		}
		files = append(files, got...)
	}
	return &registry.Snapshot{Name: r.Name, Docs: registry.ParseFiles(files)}, nil
}

// setMemoryBudget tunes the collector for one validation run, which is
// short and allocation-heavy (YAML nodes): collections are rare (GOGC
// 400, set when the run starts) until the heap reaches five times the input or 256 MiB, whichever
// is more; then the soft limit collects as often as it takes. What stays
// live is about twice the input (the files, kept for the report's
// snippets, and the problems; each file's trees are released once its
// rules have run): measured on SafeMolt's corpus ×250, at most 92–106 MB
// for 48 MB, so the limit is never a ceiling the collector thrashes
// against. Measured on that corpus: 0.28 GB peak RSS instead of 0.73 GB
// with GOGC 400 alone.
func setMemoryBudget(files []registry.File) {
	var input int64
	for _, f := range files {
		input += int64(len(f.Content))
	}
	debug.SetMemoryLimit(max(256<<20, 5*input))
}
