package report

import (
	"io"
	"net/url"
	"path/filepath"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/sipregistry/sip/registry"
)

// Tool names the program in a SARIF log.
type Tool struct {
	Name           string
	Version        string
	InformationURI string
	// RulesURI is where rules are documented; a rule's help link is
	// RulesURI + "#" + rule id.
	RulesURI string
}

// writeSARIF prints one SARIF 2.1.0 run with every rule of the catalogue
// (so a consumer can show help for rules that found nothing) and one
// result per problem.
func writeSARIF(w io.Writer, r Result, tool Tool) error {
	log, err := sarif.New(sarif.Version210, true)
	if err != nil {
		return err
	}
	run := sarif.NewRunWithInformationURI(tool.Name, tool.InformationURI)
	if tool.Version != "" {
		run.Tool.Driver.Version = &tool.Version
		run.Tool.Driver.SemanticVersion = &tool.Version
	}
	for _, rule := range registry.Rules {
		d := run.AddRule(rule.ID).
			WithName(rule.ID).
			WithShortDescription(sarif.NewMultiformatMessageString(rule.Summary)).
			WithFullDescription(sarif.NewMultiformatMessageString(rule.Summary)).
			WithHelp(sarif.NewMultiformatMessageString(rule.Help)).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(string(rule.Severity))).
			WithProperties(sarif.Properties{"scope": string(rule.Scope)})
		if tool.RulesURI != "" {
			d.WithHelpURI(tool.RulesURI + "#" + rule.ID)
		}
	}
	for _, p := range r.Problems {
		text := p.Message
		if p.Hint != "" {
			text += ". " + p.Hint
		}
		loc := sarif.NewPhysicalLocation().WithArtifactLocation(sarif.NewSimpleArtifactLocation(fileURI(p.Path)))
		if p.Line > 0 {
			region := sarif.NewRegion().WithStartLine(p.Line).WithEndLine(max(p.EndLine, p.Line))
			if p.Column > 0 {
				region.WithStartColumn(p.Column)
			}
			loc.WithRegion(region)
		}
		run.AddResult(sarif.NewRuleResult(p.Rule).
			WithLevel(string(p.Severity)).
			WithMessage(sarif.NewTextMessage(text)).
			WithLocations([]*sarif.Location{sarif.NewLocationWithPhysicalLocation(loc)}))
	}
	run.AddInvocation(true)
	log.AddRun(run)
	return log.PrettyWrite(w)
}

// fileURI turns a path as printed into a relative URI reference.
func fileURI(p string) string {
	return (&url.URL{Path: filepath.ToSlash(p)}).String()
}
