package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
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

With --sealing-key FILE (or SIP_SEALING_KEY_FILE) each sealed benchmark
answer must also open with the registry's key to one of its choices, as
the App's check run requires; nothing opened is printed.

Exit status: 0 valid (warnings allowed), 65 errors found, 66 a PATH does
not exist or holds no SIP, 64 usage error, 78 --base or --sealing-key cannot be read,
70 internal error.`

// sipTool describes this program in SARIF logs.
func sipTool() report.Tool {
	return report.Tool{
		Name:           "sip",
		Version:        version,
		InformationURI: "https://github.com/sipregistry/sip",
		RulesURI:       "https://github.com/sipregistry/sip/blob/main/docs/rules.md",
	}
}

func runValidate(ctx context.Context, e env, args []string) int {
	fs := newFlagSet("validate", "[--format text|json|sarif|github] [--base REV] [--color auto|always|never] [PATH...] | --list-rules", validateAbout)
	format := fs.String("format", "text", "output format: "+strings.Join(report.Formats, ", "))
	base := fs.String("base", "", "git revision to apply the edit rules against, e.g. origin/main")
	keyFile := fs.String("sealing-key", e.getenv("SIP_SEALING_KEY_FILE"), "the registry's sealing key: sealed answers must open with it to one of their choices (default $SIP_SEALING_KEY_FILE)")
	color := fs.String("color", "auto", "colour the text format: auto (on a terminal, unless NO_COLOR is set), always or never")
	config := fs.String("config", "", "the repository's policy file, for its `rules` (severity per rule) and `sections` (default "+policy.Path+" when it exists)")
	listRules := fs.Bool("list-rules", false, "list every rule (id, severity, scope, what it requires) and exit; --format json for a list of objects")
	paths, code, ok := parseFlags(fs, e, args)
	if !ok {
		return code
	}
	if !oneOf(*format, report.Formats) {
		fmt.Fprintf(e.stderr, "sip validate: unknown --format %q (want %s)\n", *format, strings.Join(report.Formats, ", "))
		return exitUsage
	}
	useColor, ok := colorFor(e, *color)
	if !ok {
		fmt.Fprintf(e.stderr, "sip validate: unknown --color %q (want auto, always or never)\n", *color)
		return exitUsage
	}
	if *listRules {
		if len(paths) > 0 {
			fmt.Fprintln(e.stderr, "sip validate: --list-rules takes no paths")
			return exitUsage
		}
		return writeRules(e, *format)
	}
	if len(paths) == 0 {
		paths = []string{"evaluations"}
	}

	// A validation run is short and allocation-heavy (YAML nodes): trade
	// memory for fewer collections. The limit keeps a huge tree in check.
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(2 << 30)

	files, code := readPaths(e, paths)
	if code != exitOK {
		return code
	}
	opts := registry.Options{Dir: sipFolder(paths)}
	if code := applyConfig(e, *config, &opts); code != exitOK {
		return code
	}
	opts.Body.Exists = localFiles
	if *base != "" {
		snap, err := baseSnapshot(paths, *base)
		if err != nil {
			fmt.Fprintf(e.stderr, "sip validate: --base: %v\n", err)
			return exitConfig
		}
		opts.Base = snap
	}
	if *keyFile != "" {
		k, err := seal.LoadKeyFile(*keyFile)
		if err != nil {
			fmt.Fprintf(e.stderr, "sip validate: --sealing-key: %v\n", err)
			return exitConfig
		}
		opts.Key = k
	}
	problems := registry.Validate(registry.ParseFiles(files), opts)
	sources := make(map[string][]byte, len(files))
	for _, f := range files {
		sources[f.Path] = f.Content
	}
	if err := report.Write(e.stdout, *format, report.Result{Files: len(files), Problems: problems, Sources: sources, Color: useColor}, sipTool()); err != nil {
		fmt.Fprintf(e.stderr, "sip validate: %v\n", err)
		return exitInternal
	}
	if errs, _ := registry.Count(problems); errs > 0 {
		return exitData
	}
	return exitOK
}

// applyConfig reads the policy file named (or the repository's, when the
// current folder has one) and applies its rules and sections.
func applyConfig(e env, name string, opts *registry.Options) int {
	explicit := name != ""
	if !explicit {
		name = policy.Path
	}
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "sip validate: --config: %v\n", err)
		return exitConfig
	}
	p, err := policy.Parse(data)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip validate: %s\n", strings.ReplaceAll(err.Error(), policy.Path, name))
		return exitConfig
	}
	p.Apply(opts)
	return exitOK
}

// localFiles says whether a path a SIP body links to exists, for paths
// inside the current folder (others are not judged).
func localFiles(p string) (exists, known bool) {
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		return false, false
	}
	_, err := os.Stat(filepath.FromSlash(p))
	return err == nil, true
}

// readPaths reads the SIP files under every path, each file once.
func readPaths(e env, paths []string) ([]registry.File, int) {
	var files []registry.File
	seen := map[string]bool{}
	for _, p := range paths {
		got, err := readPath(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(e.stderr, "sip: %s does not exist\n", p)
			return nil, exitNoInput
		case err != nil:
			fmt.Fprintf(e.stderr, "sip: %v\n", err)
			return nil, exitNoInput
		case len(got) == 0:
			fmt.Fprintf(e.stderr, "sip: %s holds no SIP file (*.md other than README.md)\n", p)
			return nil, exitNoInput
		}
		for _, f := range got {
			if !seen[f.Path] {
				seen[f.Path] = true
				files = append(files, f)
			}
		}
	}
	return files, exitOK
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

// sipFolder is the SIP folder being validated: the one folder named, whose
// subfolders hold no SIPs. Loose files, or several paths, have none.
func sipFolder(paths []string) string {
	if len(paths) != 1 {
		return ""
	}
	p := filepath.ToSlash(filepath.Clean(paths[0]))
	if info, err := os.Stat(p); err != nil || !info.IsDir() {
		return ""
	}
	return p
}
