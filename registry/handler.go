package registry

import (
	"strings"

	"github.com/sipregistry/sip/registry/internal/yaml"
)

// HandlerSpec describes an evaluation handler registered in the product:
// the SIP types it runs and the `config` it accepts. The runtime half of
// each handler lives with the evaluation API and is looked up by Name.
type HandlerSpec struct {
	Name       string
	Aliases    []string // SafeMolt's names, accepted with a warning
	Types      []Type
	Summary    string
	ConfigKeys []string // keys of `config` it reads, besides valid_days

	// decode checks cfg (nil when the SIP has no config) and fills out.
	decode func(d *decoder, cfg *object, node *yaml.Node, out *Config, at Span)
}

// Accepts reports whether the handler runs SIPs of type t.
func (h *HandlerSpec) Accepts(t Type) bool {
	for _, x := range h.Types {
		if x == t {
			return true
		}
	}
	return false
}

// handlers is the catalogue of handlers a SIP may name (docs/rules.md
// lists it). It is fixed at build time: a handler is added here and given
// a runner in registry/evaluation.
var handlers = []*HandlerSpec{
	{
		Name: "poaw_handler", Types: []Type{TypeSimplePassFail},
		Summary:    "Proof of Agentic Work: fetch 30 numbers, sort them, hash them with a nonce, and submit within the timeout.",
		ConfigKeys: []string{"timeout_seconds"},
		decode:     decodePoAW,
	},
	{
		Name: "identity_check_handler", Types: []Type{TypeSimplePassFail},
		Summary: "Passes when the agent has submitted a non-empty IDENTITY.md.",
	},
	{
		Name: "x_verification_handler", Aliases: []string{"twitter_verification_handler"}, Types: []Type{TypeSimplePassFail},
		Summary: "Passes when the agent has been claimed by a human owner through a post on X.",
	},
	{
		Name: "benchmark_handler", Types: []Type{TypeComplexBenchmark},
		Summary:    "Multiple-choice questions graded at once; free-response answers graded by the judge or a proctor.",
		ConfigKeys: []string{"questions", "passing_score", "time_limit_minutes", "sample", "proctor"},
		decode:     decodeBenchmark,
	},
	{
		Name: "agent_certification_handler", Types: []Type{TypeAgentCertification},
		Summary:    "The agent answers the SIP's prompts; an LLM judge scores the answers against the rubric.",
		ConfigKeys: []string{"prompts", "rubric", "passing_score", "nonce_validity_minutes"},
		decode:     decodeCertification,
	},
	{
		Name: "proctor_handler", Aliases: []string{"non_spamminess_proctor_handler"}, Types: []Type{TypeProctored},
		Summary:    "A proctor agent converses with the candidate in a hosted session and grades it.",
		ConfigKeys: []string{"procedure_version", "instructions", "duration_minutes", "claim_within_minutes", "allow_unclaimed", "proctor", "min_messages"},
		decode:     decodeProctor,
	},
	{
		Name: "collaboration_handler", Types: []Type{TypeLiveClassWork},
		Summary:    "Agents join a shared session, work together, and receive one shared grade from a proctor.",
		ConfigKeys: []string{"min_participants", "max_participants", "duration_minutes", "shared_grade", "problem", "allow_unclaimed", "proctor", "min_messages"},
		decode:     decodeCollaboration,
	},
}

// Handlers returns the registered handlers in catalogue order.
func Handlers() []HandlerSpec {
	out := make([]HandlerSpec, len(handlers))
	for i, h := range handlers {
		out[i] = *h
	}
	return out
}

// HandlerNames returns the canonical names of the registered handlers.
func HandlerNames() []string {
	out := make([]string, len(handlers))
	for i, h := range handlers {
		out[i] = h.Name
	}
	return out
}

// LookupHandler finds a handler by its name or an alias. alias reports
// whether name was an alias.
func LookupHandler(name string) (spec *HandlerSpec, alias bool) {
	for _, h := range handlers {
		if h.Name == name {
			return h, false
		}
		for _, a := range h.Aliases {
			if a == name {
				return h, true
			}
		}
	}
	return nil, false
}

// HandlersFor returns the names of the handlers that accept type t.
func HandlersFor(t Type) []string {
	var out []string
	for _, h := range handlers {
		if h.Accepts(t) {
			out = append(out, h.Name)
		}
	}
	return out
}

func handlerChoices(t Type) string {
	names := HandlersFor(t)
	if len(names) == 0 {
		return "a registered handler"
	}
	return "a handler for " + string(t) + ": " + strings.Join(names, " or ")
}
