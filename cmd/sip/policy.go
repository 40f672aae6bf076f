package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/gitrev"
)

const policyAbout = `Check a repository's approval policy, or explain what it requires of a change.

  sip policy check [FILE]
      Read FILE (default ` + policy.Path + `) as the GitHub App does, strictly: every
      problem is reported with its line.

  sip policy explain [--base REV] [--policy FILE] [--author LOGIN] [--approved-by a,b] [PATH]
      Compare the SIPs under PATH (default evaluations) with REV (default
      origin/main) and say which rule applies to each change, who may approve,
      who has (--approved-by simulates reviews), and what is missing. The
      policy is read from REV, as the App reads it from the default branch,
      unless --policy names a file. Team membership and repository roles are
      on GitHub: locally, only users listed by name are counted.`

func runPolicy(ctx context.Context, e env, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "check":
			return runPolicyCheck(e, args[1:])
		case "explain":
			return runPolicyExplain(e, args[1:])
		case "-h", "-help", "--help", "help":
			fmt.Fprintln(e.stdout, "Usage: sip policy check [FILE] | sip policy explain [flags] [PATH]\n\n"+policyAbout+"\n\nFlags of explain:")
			fs, _ := explainFlags()
			fs.SetOutput(e.stdout)
			fs.PrintDefaults()
			return exitOK
		}
	}
	fmt.Fprintln(e.stderr, "Usage: sip policy check [FILE] | sip policy explain [flags] [PATH]\n\n"+policyAbout)
	return exitUsage
}

func runPolicyCheck(e env, args []string) int {
	fset := newFlagSet("policy check", "[FILE]", policyAbout)
	pos, code, ok := parseFlags(fset, e, args)
	if !ok {
		return code
	}
	name := policy.Path
	if len(pos) > 0 {
		name = pos[0]
	}
	data, err := os.ReadFile(name)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip policy check: %v\n", err)
		return exitNoInput
	}
	if _, err := policy.Parse(data); err != nil {
		var pe *policy.Error
		if errors.As(err, &pe) {
			for _, p := range pe.Problems {
				fmt.Fprintf(e.stdout, "%s:%d: %s\n", name, p.Line, p.Message)
			}
		} else {
			fmt.Fprintf(e.stdout, "%s: %v\n", name, err)
		}
		return exitData
	}
	fmt.Fprintf(e.stdout, "%s: a valid policy (the people and teams it names are checked on GitHub by the App)\n", name)
	return exitOK
}

// explainOptions are the flags of sip policy explain.
type explainOptions struct {
	base, file, author, approvedBy *string
}

func explainFlags() (*flag.FlagSet, explainOptions) {
	fset := newFlagSet("policy explain", "[--base REV] [--policy FILE] [--author LOGIN] [--approved-by a,b] [PATH]", policyAbout)
	return fset, explainOptions{
		base:       fset.String("base", "origin/main", "the revision the change goes into; its policy file applies"),
		file:       fset.String("policy", "", "read the policy from this file instead of from --base"),
		author:     fset.String("author", "", "the pull request's author (their own approval never counts)"),
		approvedBy: fset.String("approved-by", "", "comma-separated logins to count as approving the change"),
	}
}

func runPolicyExplain(e env, args []string) int {
	fset, o := explainFlags()
	base, file, author, approvedBy := o.base, o.file, o.author, o.approvedBy
	pos, code, ok := parseFlags(fset, e, args)
	if !ok {
		return code
	}
	dir := "evaluations"
	if len(pos) > 0 {
		dir = pos[0]
	}
	rev, err := gitrev.Open(dir, *base)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip policy explain: --base: %v\n", err)
		return exitConfig
	}
	p, code := explainPolicy(e, rev, *file)
	if code != exitOK {
		return code
	}
	before, err := rev.Files(dir)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip policy explain: %v\n", err)
		return exitConfig
	}
	after, err := readPath(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(e.stderr, "sip policy explain: %v\n", err)
		return exitNoInput
	}
	touched := changedPaths(before, after)
	if data, found, _ := rev.ReadFile(policy.Path); found {
		if now, err := os.ReadFile(filepath.Join(rev.Root(), policy.Path)); err != nil || string(now) != string(data) {
			touched = append(touched, policy.Path)
		}
	}
	change := policy.ChangeOf(filepath.ToSlash(filepath.Clean(dir)), touched, registry.ParseFiles(before), registry.ParseFiles(after))
	if change.Empty() {
		fmt.Fprintf(e.stdout, "No SIP and no governance file differs from %s: no approval needed.\n", rev.Name)
		return exitOK
	}
	var reviews []policy.Review
	for _, u := range strings.Split(*approvedBy, ",") {
		if u = strings.TrimSpace(strings.TrimPrefix(u, "@")); u != "" {
			reviews = append(reviews, policy.Review{User: u, State: policy.Approved, Agent: p.IsAgent(u)})
		}
	}
	d, err := policy.Decide(p.RequirementsFor(change, *author), *author, reviews, localJudge{})
	if err != nil {
		fmt.Fprintf(e.stderr, "sip policy explain: %v\n", err)
		return exitInternal
	}
	fmt.Fprintf(e.stdout, "Against %s: %s\n\n%s%s", rev.Name, d.Title(), d.Explain(), p.Summary())
	if d.State != policy.Approved {
		return exitData
	}
	return exitOK
}

// explainPolicy reads the policy from a file, or from the base revision
// (the defaults when it has none).
func explainPolicy(e env, rev *gitrev.Revision, file string) (*policy.Policy, int) {
	var data []byte
	var err error
	if file != "" {
		data, err = os.ReadFile(file)
	} else {
		data, _, err = rev.ReadFile(policy.Path)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "sip policy explain: %v\n", err)
		return nil, exitConfig
	}
	p, err := policy.Parse(data)
	if err != nil {
		fmt.Fprintf(e.stderr, "sip policy explain: %v\n", err)
		return nil, exitConfig
	}
	return p, exitOK
}

// changedPaths lists the paths whose content differs between two sets.
func changedPaths(before, after []registry.File) []string {
	was := make(map[string]string, len(before))
	for _, f := range before {
		was[f.Path] = string(f.Content)
	}
	var out []string
	for _, f := range after {
		if c, ok := was[f.Path]; !ok || c != string(f.Content) {
			out = append(out, f.Path)
		}
		delete(was, f.Path)
	}
	for p := range was {
		out = append(out, p)
	}
	return out
}

// localJudge answers the policy's questions without GitHub: teams and
// repository roles are unknown, so only users listed by name count, and
// simulated approvals are of the current tree.
type localJudge struct{}

func (localJudge) InTeam(string, string) (bool, error)     { return false, nil }
func (localJudge) HasRole(string, ...string) (bool, error) { return false, nil }
func (localJudge) ChangedSince(string) (bool, error)       { return false, nil }
