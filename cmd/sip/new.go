package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/go-git/go-git/v5/config"

	"github.com/sipregistry/sip/registry"
)

const newAbout = `
Writes SIP-<N>.md into DIR (default evaluations), where N is the next free
SIP number, from a template that already passes 'sip validate', and prints
its path. The SIP starts as a draft at version 0.1.0; fill in the body and
config, then open a pull request. With --github OWNER/NAME (and a token in
GITHUB_TOKEN) it also skips the numbers that the repository's open pull
requests add, so it does not pick a number another pull request holds.`

//go:embed templates/*.md.tmpl
var templatesFS embed.FS

// sipTemplates are parsed on first use, not at start-up: every run of
// sip (sip --version, a pre-commit sip validate) would pay for them.
var sipTemplates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{"quote": yamlQuote}).
		ParseFS(templatesFS, "templates/*.md.tmpl"))
})

// newSIP holds what a template needs.
type newSIP struct {
	Number  int
	ID      string
	Name    string
	Module  string
	Type    registry.Type
	Handler string
	Author  string
	Date    string
}

func runNew(ctx context.Context, e env, args []string) int {
	flags := newFlagSet("new", "--name NAME --type TYPE [--module M] [--dir DIR]", newAbout)
	name := flags.String("name", "", "the evaluation's name, e.g. \"AI Safety Benchmark\" (required)")
	typ := flags.String("type", "", "one of "+strings.Join(typeList(), ", ")+" (required)")
	module := flags.String("module", "", "module used to group evaluations (default: process for process SIPs, otherwise general)")
	dir := flags.String("dir", "evaluations", "folder of SIP files")
	id := flags.String("id", "", "id of the SIP (default: the name in kebab-case)")
	author := flags.String("author", "", "author (default: git config user.name)")
	handler := flags.String("handler", "", "handler (default: the first registered for the type)")
	repo := flags.String("github", "", "OWNER/NAME: also skip the numbers its open pull requests add (reads GITHUB_TOKEN; SIP_GITHUB_API_URL for GitHub Enterprise)")
	rest, code, ok := parseFlags(flags, e, args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(e.stderr, "sip new: unexpected argument %q\n", rest[0])
		return exitUsage
	}
	s := newSIP{Name: strings.TrimSpace(*name), Type: registry.Type(*typ), Module: *module, ID: *id, Handler: *handler, Author: *author}
	if msg := s.complete(); msg != "" {
		fmt.Fprintf(e.stderr, "sip new: %s\n", msg)
		return exitUsage
	}
	if s.Author == "" {
		s.Author = defaultAuthor(e)
	}
	s.Date = time.Now().UTC().Format(time.DateOnly)
	var claimed []int
	if *repo != "" {
		owner, name, ok := strings.Cut(*repo, "/")
		if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			fmt.Fprintf(e.stderr, "sip new: --github %q: write it as OWNER/NAME\n", *repo)
			return exitUsage
		}
		token := e.getenv("GITHUB_TOKEN")
		if token == "" {
			fmt.Fprintln(e.stderr, "sip new: --github needs a token in GITHUB_TOKEN that can read the repository")
			return exitConfig
		}
		var err error
		if claimed, err = claimedByOpenPulls(ctx, e.getenv("SIP_GITHUB_API_URL"), token, owner, name); err != nil {
			fmt.Fprintf(e.stderr, "sip new: %v\n", err)
			return exitUnavailable
		}
	}

	path, err := writeNew(*dir, &s, claimed)
	switch {
	case errors.Is(err, errIDTaken):
		fmt.Fprintf(e.stderr, "sip new: %v; choose another with --id\n", err)
		return exitData
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(e.stderr, "sip new: %v\n", err)
		return exitNoInput
	case err != nil:
		fmt.Fprintf(e.stderr, "sip new: %v\n", err)
		return exitInternal
	}
	fmt.Fprintln(e.stdout, path)
	return exitOK
}

// complete checks the flags and fills in defaults. It returns a usage
// message when something is wrong.
func (s *newSIP) complete() string {
	switch {
	case s.Name == "":
		return "--name is required"
	case s.Type == "":
		return "--type is required (one of " + strings.Join(typeList(), ", ") + ")"
	case !oneOf(string(s.Type), typeList()):
		return fmt.Sprintf("--type %q is not one of %s", s.Type, strings.Join(typeList(), ", "))
	}
	if s.ID == "" {
		s.ID = registry.Kebab(s.Name)
	}
	if s.Module == "" {
		s.Module = "general"
		if s.Type == registry.TypeProcess {
			s.Module = "process"
		}
	}
	if s.Type.IsEvaluation() {
		if s.Handler == "" {
			s.Handler = registry.HandlersFor(s.Type)[0]
		}
		if spec, _ := registry.LookupHandler(s.Handler); spec == nil || !spec.Accepts(s.Type) {
			return fmt.Sprintf("--handler %q does not run %s SIPs (use %s)", s.Handler, s.Type, strings.Join(registry.HandlersFor(s.Type), " or "))
		}
	} else if s.Handler != "" {
		return "process SIPs have no handler"
	}
	return ""
}

var errIDTaken = errors.New("id is already used")

// writeNew picks the next free number in dir and creates the file. The
// file is created exclusively, so two runs at once never overwrite each
// other: the loser moves on to the next number.
func writeNew(dir string, s *newSIP, claimed []int) (string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s is not a folder", dir)
	}
	files, err := registry.ReadFS(os.DirFS(dir), ".", dir)
	if err != nil {
		return "", err
	}
	next := 1
	for _, n := range claimed {
		next = max(next, n+1)
	}
	for _, d := range registry.ParseFiles(files) {
		if n := fileNumber(d.Path); n >= next {
			next = n + 1
		}
		if d.SIP == nil {
			continue
		}
		next = max(next, d.SIP.Number+1)
		if d.SIP.ID == s.ID {
			return "", fmt.Errorf("%w: %q by %s", errIDTaken, s.ID, d.Path)
		}
	}
	for attempt := 0; attempt < 100; attempt++ {
		s.Number = next + attempt
		var buf bytes.Buffer
		if err := sipTemplates().ExecuteTemplate(&buf, templateName(s.Type), s); err != nil {
			return "", err
		}
		path := filepath.Join(dir, registry.FileName(s.Number))
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(buf.Bytes()); err != nil {
			f.Close()
			return "", err
		}
		return path, f.Close()
	}
	return "", fmt.Errorf("no free SIP number found after %d", next)
}

// fileNumber reads N from a SIP-N.md file name, or returns 0.
func fileNumber(path string) int {
	var n int
	if _, err := fmt.Sscanf(filepath.Base(path), "SIP-%d.md", &n); err == nil {
		return n
	}
	return 0
}

func templateName(t registry.Type) string { return string(t) + ".md.tmpl" }

func typeList() []string {
	out := make([]string, len(registry.Types))
	for i, t := range registry.Types {
		out[i] = string(t)
	}
	return out
}

// yamlQuote writes s as a double-quoted YAML scalar (JSON strings are valid
// YAML), so any name is safe in the frontmatter.
func yamlQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// defaultAuthor is git's user.name, then the login name.
func defaultAuthor(e env) string {
	if cfg, err := config.LoadConfig(config.GlobalScope); err == nil && strings.TrimSpace(cfg.User.Name) != "" {
		return strings.TrimSpace(cfg.User.Name)
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if v := e.getenv("USER"); v != "" {
		return v
	}
	return "unknown"
}
