package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/mattn/go-isatty"

	"github.com/sipregistry/sip/registry"
)

// colorFor decides whether the text output is coloured: --color always or
// never, or auto: on a terminal unless NO_COLOR is set (no-color.org).
func colorFor(e env, flag string) (color, ok bool) {
	switch flag {
	case "always":
		return true, true
	case "never":
		return false, true
	case "auto":
		if e.getenv("NO_COLOR") != "" {
			return false, true
		}
		f, isFile := e.stdout.(*os.File)
		return isFile && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())), true
	}
	return false, false
}

// ruleView is one rule as `sip validate --list-rules --format json` lists it.
type ruleView struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Scope    string `json:"scope"`
	Requires string `json:"requires"`
	Fix      string `json:"fix"`
	Docs     string `json:"docs"`
}

// writeRules lists the rule catalogue: a table for people, JSON for
// programs (the other formats print the table too).
func writeRules(e env, format string) int {
	var views []ruleView
	for _, r := range registry.Rules {
		views = append(views, ruleView{ID: r.ID, Severity: string(r.Severity), Scope: string(r.Scope), Requires: r.Summary, Fix: r.Help,
			Docs: sipTool().RulesURI + "#" + r.ID})
	}
	if format == "json" {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(views); err != nil {
			fmt.Fprintf(e.stderr, "sip validate: %v\n", err)
			return exitInternal
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tSEVERITY\tSCOPE\tREQUIRES")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.ID, v.Severity, v.Scope, v.Requires)
	}
	if err := tw.Flush(); err != nil {
		return exitInternal
	}
	fmt.Fprintf(e.stdout, "\n%d rules; each with an example and its fix: %s\n", len(views), sipTool().RulesURI)
	return exitOK
}
