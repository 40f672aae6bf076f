// Command sip validates, creates and serves SIPs: the improvement proposals
// that define evaluations of AI agents.
//
// Exit codes follow BSD sysexits: 0 ok, 64 usage, 65 invalid SIPs, 66 no
// input, 69 database unavailable, 70 internal error, 78 configuration error.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/sipregistry/sip/registry"
)

// Exit codes (BSD sysexits, as in the assessment design).
const (
	exitOK          = 0
	exitUsage       = 64
	exitData        = 65
	exitNoInput     = 66
	exitUnavailable = 69
	exitInternal    = 70
	exitConfig      = 78
)

// env is the part of the process a command may use: its streams, its
// environment, and its working directory. Tests build one by hand.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) int
}

func commands() []command {
	return []command{
		{"validate", "check SIP files and report every problem", runValidate},
		{"new", "write a new SIP from a valid template", runNew},
		{"index", "write evaluations/README.md, the index of the SIPs", runIndex},
		{"seal", "seal benchmark answers to a registry's key, or make a key", runSeal},
		{"verify", "verify an Open Badges credential a registry issued", runVerify},
		{"policy", "check the approval policy, or explain what it requires of a change", runPolicy},
		{"serve", "run the HTTP API on the registry", runServe},
		{"mcp", "serve a registry's MCP tools on standard input and output", runMCP},
		{"sync", "load the SIPs of a folder or a git commit into the registry", runSync},
		{"migrate", "apply the registry's schema migrations, or show their status", runMigrate},
		{"backup", "copy the SQLite database while it serves", runBackup},
		{"app", "create the GitHub App from its manifest and keep its credentials", runApp},
		{"results", "revoke a result (maintainers)", runResults},
		{"import", "import another registry (SafeMolt): agents, keys, owners, results", runImport},
		{"traces", "export the execution records of graded attempts as JSON Lines", runTraces},
		{"version", "print the version, commit, build date and Go version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and turns a panic into exit code 70.
func run(ctx context.Context, e env, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "sip: internal error: %v\n", r)
			code = exitInternal
		}
	}()
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(e.stdout)
		return exitOK
	case "help":
		// sip help CMD is sip CMD --help.
		if len(args) > 1 && args[1] != "help" {
			return run(ctx, e, []string{args[1], "--help"})
		}
		usage(e.stdout)
		return exitOK
	case "-v", "-version", "--version":
		args[0] = "version"
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "sip: unknown command %q", args[0])
	if s := registry.Suggest(args[0], commandNames()); s != "" {
		fmt.Fprintf(e.stderr, "; did you mean %q?", s)
	}
	fmt.Fprint(e.stderr, "\n\n")
	usage(e.stderr)
	return exitUsage
}

func commandNames() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.name)
	}
	return out
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: sip <command> [flags] [args]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'sip <command> --help' for a command's flags.")
}

// parseFlags parses flags that may come before, between or after the
// positional arguments (`sip validate evaluations --format json`). It
// returns the positional arguments, or an exit code when parsing ended.
//
// Help goes to standard output once; a flag error goes to standard error
// with the usage, so that `sip CMD --help | less` shows it and a script's
// mistake is not mistaken for output.
func parseFlags(fs *flag.FlagSet, e env, args []string) ([]string, int, bool) {
	var msgs bytes.Buffer
	fs.SetOutput(&msgs)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(e.stdout)
				fs.Usage()
				return nil, exitOK, false
			}
			e.stderr.Write(msgs.Bytes())
			return nil, exitUsage, false
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, 0, true
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), 0, true
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// newFlagSet builds a flag set whose usage shows the command's synopsis.
func newFlagSet(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet("sip "+name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: sip %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(about))
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

func oneOf(v string, allowed []string) bool { return slices.Contains(allowed, v) }
