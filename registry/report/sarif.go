package report

import (
	"io"
	"net/url"
	"path/filepath"
	"strings"

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
			WithName(pascal(rule.ID)).
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
		loc := sarif.NewPhysicalLocation().WithArtifactLocation(artifact(p.Path))
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

// artifact locates a file: an absolute path as a file: URI, a relative
// one as a reference against the root of the source tree (%SRCROOT%).
func artifact(p string) *sarif.ArtifactLocation {
	p = filepath.ToSlash(p)
	if strings.HasPrefix(p, "/") {
		return sarif.NewSimpleArtifactLocation((&url.URL{Scheme: "file", Path: p}).String())
	}
	return sarif.NewSimpleArtifactLocation((&url.URL{Path: p}).String()).WithUriBaseId("%SRCROOT%")
}

// pascal turns a rule id into the SARIF rule name, e.g. FileTooLarge.
func pascal(id string) string {
	var b strings.Builder
	for _, part := range strings.Split(id, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
