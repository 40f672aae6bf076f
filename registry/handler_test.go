package registry_test

import (
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
)

// sipWith builds a SIP of the given type and handler with a config block.
func sipWith(typ, handler, config string) string {
	s := strings.Replace(validSIP, "type: simple_pass_fail", "type: "+typ, 1)
	s = strings.Replace(s, "handler: poaw_handler", "handler: "+handler, 1)
	if config != "" {
		s = strings.Replace(s, "executable:\n", "config:\n"+config+"executable:\n", 1)
	}
	return s
}

const certConfig = `  passingScore: 70
  prompts:
    - id: a
      category: c
      description: d
      messages:
        - role: user
          content: "Hi"
      should: ["Greets back"]
    - id: b
      category: c
      description: d
      messages:
        - role: system
          content: "Be kind"
        - role: user
          content: "Help"
      should: ["Helps"]
  rubric:
    - promptId: a
      criteria: x
      maxScore: 50
    - promptId: b
      criteria: y
      weight: 2
      maxScore: 50
`

const benchConfig = `  passing_score: 80
  questions:
    - id: q1
      prompt: "2+2?"
      choices: ["3", "4"]
      answer: "4"
      points: 5
    - id: q2
      prompt: "Explain."
      points: 5
`

func TestHandlerConfig(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, typ, handler, config string
		want                       string // substring of a config problem; "" = valid
	}{
		{"certification valid", "agent_certification", "agent_certification_handler", certConfig, ""},
		{"rubric sums to 105", "agent_certification", "agent_certification_handler", strings.Replace(certConfig, "maxScore: 50\n", "maxScore: 55\n", 1), "sum to 105"},
		{"rubric row for missing prompt", "agent_certification", "agent_certification_handler", strings.Replace(certConfig, "promptId: b", "promptId: c", 1), `prompt "c", which does not exist`},
		{"prompt without rubric row", "agent_certification", "agent_certification_handler", strings.Replace(certConfig, "promptId: b", "promptId: a", 1), `prompt "b" has no rubric row`},
		{"two rows for one prompt", "agent_certification", "agent_certification_handler", strings.Replace(certConfig, "promptId: b", "promptId: a", 1), `more than one rubric row`},
		{"duplicate prompt id", "agent_certification", "agent_certification_handler", strings.Replace(certConfig, "- id: b", "- id: a", 1), `used twice`},
		{"bad role", "agent_certification", "agent_certification_handler", strings.Replace(certConfig, "role: system", "role: narrator", 1), `not one of system, user, assistant`},
		{"last message not user", "agent_certification", "agent_certification_handler", strings.Replace(certConfig, "role: user\n          content: \"Hi\"", "role: assistant\n          content: \"Hi\"", 1), `not from the user`},
		{"passing score over 100", "agent_certification", "agent_certification_handler", strings.Replace(certConfig, "passingScore: 70", "passingScore: 120", 1), `between 0 and 100`},
		{"zero weight", "agent_certification", "agent_certification_handler", strings.Replace(certConfig, "weight: 2", "weight: 0", 1), `greater than 0`},
		{"nonce minutes zero", "agent_certification", "agent_certification_handler", certConfig + "  nonce_validity_minutes: 0\n", `nonce_validity_minutes must be`},
		{"old and new spelling at once", "agent_certification", "agent_certification_handler", certConfig + "  passing_score: 80\n", `sets both "passing_score" and its old spelling "passingScore"`},
		{"certification without config", "agent_certification", "agent_certification_handler", "", "config is required"},
		{"benchmark valid", "complex_benchmark", "benchmark_handler", benchConfig, ""},
		{"answer not a choice", "complex_benchmark", "benchmark_handler", strings.Replace(benchConfig, `answer: "4"`, `answer: "5"`, 1), `not one of the choices`},
		{"multiple choice without answer", "complex_benchmark", "benchmark_handler", strings.Replace(benchConfig, "      answer: \"4\"\n", "", 1), `answer is required`},
		{"zero points", "complex_benchmark", "benchmark_handler", strings.Replace(benchConfig, "points: 5", "points: 0", 1), `greater than 0`},
		{"duplicate question id", "complex_benchmark", "benchmark_handler", strings.Replace(benchConfig, "id: q2", "id: q1", 1), `used twice`},
		{"one choice", "complex_benchmark", "benchmark_handler", strings.Replace(strings.Replace(benchConfig, `["3", "4"]`, `["4"]`, 1), "", "", 1), `only one choice`},
		{"passing_score missing", "complex_benchmark", "benchmark_handler", strings.Replace(benchConfig, "  passing_score: 80\n", "", 1), `passing_score is required`},
		{"no questions", "complex_benchmark", "benchmark_handler", "  passing_score: 50\n  questions: []\n", `questions is empty`},
		{"collaboration valid", "live_class_work", "collaboration_handler", "  min_participants: 4\n  max_participants: 4\n  duration_minutes: 60\n", ""},
		{"one participant", "live_class_work", "collaboration_handler", "  min_participants: 1\n  duration_minutes: 60\n", `at least 2`},
		{"max below min", "live_class_work", "collaboration_handler", "  min_participants: 4\n  max_participants: 3\n  duration_minutes: 60\n", `less than config.min_participants`},
		{"no duration", "live_class_work", "collaboration_handler", "  min_participants: 2\n", `duration_minutes is required`},
		{"shared_grade not bool", "live_class_work", "collaboration_handler", "  min_participants: 2\n  duration_minutes: 5\n  shared_grade: maybe\n", `shared_grade must be true or false`},
		{"poaw valid", "simple_pass_fail", "poaw_handler", "  timeout_seconds: 300\n", ""},
		{"poaw timeout too long", "simple_pass_fail", "poaw_handler", "  timeout_seconds: 301\n", `between 1 and 300`},
		{"poaw timeout not integer", "simple_pass_fail", "poaw_handler", "  timeout_seconds: 1.5\n", `must be an integer`},
		{"valid_days zero", "simple_pass_fail", "identity_check_handler", "  valid_days: 0\n", `valid_days must be > 0`},
		{"attempt limits", "simple_pass_fail", "identity_check_handler", "  max_attempts: 3\n  retry_after_hours: 24\n  reveal: pass_fail\n", ""},
		{"max_attempts zero", "simple_pass_fail", "identity_check_handler", "  max_attempts: 0\n", `between 1 and 1000`},
		{"reveal unknown", "simple_pass_fail", "identity_check_handler", "  reveal: everything\n", `must be score, pass_fail or none`},
		{"shared_grade false", "live_class_work", "collaboration_handler", "  min_participants: 2\n  duration_minutes: 5\n  shared_grade: false\n", `shared_grade: false is not supported`},
		{"shared_grade true", "live_class_work", "collaboration_handler", "  min_participants: 2\n  duration_minutes: 5\n  shared_grade: true\n", ""},
		{"proctored valid", "proctored", "proctor_handler", "", ""},
		{"proctored duration", "proctored", "proctor_handler", "  duration_minutes: 30\n", ""},
		{"proctors by id", "proctored", "proctor_handler", "  proctor:\n    qualification: poaw\n    proctors: [agt_0123456789abcdef]\n  min_messages: 2\n", ""},
		{"proctors by name", "proctored", "proctor_handler", "  proctor:\n    proctors: [first-proctor]\n", `is not an agent id`},
		{"proctor not a map", "proctored", "proctor_handler", "  proctor: alice\n", `must be a map`},
		{"min_messages too many", "proctored", "proctor_handler", "  min_messages: 5000\n", `between 0 and 1000`},
		{"allow_unclaimed not bool", "live_class_work", "collaboration_handler", "  min_participants: 2\n  duration_minutes: 5\n  allow_unclaimed: maybe\n", `must be true or false`},
		{"proctored duration zero", "proctored", "proctor_handler", "  duration_minutes: 0\n", `between 1 and 10080`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := registry.Parse("SIP-2.md", []byte(sipWith(tt.typ, tt.handler, tt.config)))
			var errs []string
			for _, p := range doc.Problems {
				if p.Severity == registry.SeverityError {
					errs = append(errs, p.String())
				}
			}
			if tt.want == "" {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if !strings.Contains(strings.Join(errs, "\n"), tt.want) {
				t.Errorf("want a problem with %q, got %v", tt.want, errs)
			}
		})
	}
}

func TestCertificationConfigDecoded(t *testing.T) {
	t.Parallel()
	c := registry.Parse("SIP-2.md", []byte(sipWith("agent_certification", "agent_certification_handler", certConfig))).SIP.Config.Certification
	if c == nil || len(c.Prompts) != 2 || c.Rubric[0].Weight != 1 || c.Rubric[1].Weight != 2 || c.NonceValidityMinutes != registry.DefaultNonceValidityMinutes {
		t.Fatalf("decoded %+v", c)
	}
	if c.Prompts[1].Messages[0].Role != "system" || c.PassingScore != 70 {
		t.Errorf("decoded %+v", c.Prompts[1])
	}
}

func TestHandlerCatalogue(t *testing.T) {
	t.Parallel()
	for _, typ := range registry.Types {
		if typ.IsEvaluation() && len(registry.HandlersFor(typ)) == 0 {
			t.Errorf("no handler runs %s", typ)
		}
	}
	if h, alias := registry.LookupHandler("twitter_verification_handler"); h == nil || !alias || h.Name != "x_verification_handler" {
		t.Errorf("alias lookup = %v, %v", h, alias)
	}
}
