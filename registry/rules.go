package registry

// Scope says what a rule needs to see to decide.
type Scope string

// Rule scopes.
const (
	ScopeFile       Scope = "file"       // one SIP file on its own
	ScopeRepository Scope = "repository" // every SIP of the repository view
	ScopeEdit       Scope = "edit"       // the view against a base revision
	ScopeGitHub     Scope = "github"     // facts only GitHub knows, checked by the App
)

// Rule is one check of the engine. IDs are stable: tools and people match
// on them, so a rule may be added but never renamed.
type Rule struct {
	ID       string
	Severity Severity // the usual severity; a problem may carry another
	Scope    Scope
	Summary  string // one line: what the rule requires
	Help     string // how to fix a violation
}

// Rules is the catalogue of every rule, in documentation order.
var Rules = []Rule{
	{"file-too-large", SeverityError, ScopeFile,
		"A SIP file is at most 1 MiB.",
		"Move long material out of the SIP or split the evaluation in two."},
	{"file-encoding", SeverityError, ScopeFile,
		"A SIP file is UTF-8 text without NUL bytes.",
		"Save the file as UTF-8 text."},
	{"frontmatter-missing", SeverityError, ScopeFile,
		"A SIP file starts with YAML frontmatter between two `---` lines.",
		"Put the fields between a first line `---` and a closing line `---`, then the Markdown body."},
	{"yaml-syntax", SeverityError, ScopeFile,
		"The frontmatter is valid YAML: no tabs in indentation, no duplicate keys, no runaway nesting or aliases.",
		"Fix the YAML at the reported line; quote strings that contain `: `, `#` or start with a special character."},
	{"field-required", SeverityError, ScopeFile,
		"Every required field is present and not empty.",
		"Add the field. Required: sip, id, name, module, type, status, author, created_at, updated_at, version, and executable.handler unless type is process."},
	{"field-type", SeverityError, ScopeFile,
		"Every field has the YAML type its definition requires (integer, string, list, map, number).",
		"Write the value in the expected type, e.g. `sip: 12` (integer), `prerequisites: [poaw]` (list)."},
	{"field-unknown", SeverityError, ScopeFile,
		"Only documented fields appear in the frontmatter. Inside `config` an unknown key is a warning, unless it is within two edits of a known key (`time_limit_minute`): then it is an error, since the key it misspells silently keeps its default.",
		"Remove the field or correct its spelling; the message suggests the nearest known field."},
	{"field-alias", SeverityWarning, ScopeFile,
		"Deprecated spellings (`title` for `name`, SafeMolt handler names) are read but should be replaced.",
		"Use the canonical name given in the message."},
	{"field-conflict", SeverityError, ScopeFile,
		"A field and its alias are not both given.",
		"Keep only the canonical field (e.g. `name`, not `title`)."},
	{"field-enum", SeverityError, ScopeFile,
		"`type` and `status` take one of their listed values.",
		"Use one of the values listed in the message."},
	{"id-format", SeverityError, ScopeFile,
		"`id` is kebab-case (`[a-z0-9]+(-[a-z0-9]+)*`) and at most 64 characters; `module` is a slug.",
		"Lower-case the id and join words with single hyphens, e.g. `ai-safety-benchmark`."},
	{"version-semver", SeverityError, ScopeFile,
		"`version` is a semantic version string MAJOR.MINOR.PATCH.",
		"Write the version as a string with three numbers, e.g. `version: \"1.0.0\"`."},
	{"date-format", SeverityError, ScopeFile,
		"`created_at` and `updated_at` are RFC 3339 timestamps or YYYY-MM-DD dates.",
		"Write e.g. `2026-11-22` or `2026-11-22T10:00:00Z`."},
	{"date-order", SeverityError, ScopeFile,
		"`updated_at` is not before `created_at`.",
		"Set updated_at to the time of the latest change, on or after created_at."},
	{"handler-unknown", SeverityError, ScopeFile,
		"`executable.handler` names a handler registered in the product.",
		"Use one of the registered handlers listed in docs/rules.md (or the message's suggestion)."},
	{"handler-type-mismatch", SeverityError, ScopeFile,
		"The handler accepts the SIP's `type`; process SIPs have no handler.",
		"Pick the handler made for this type, or change the type."},
	{"config-invalid", SeverityError, ScopeFile,
		"`config` satisfies the rules of the SIP's handler (questions, prompts, rubric, participants, timeouts).",
		"Correct the value at the reported line as the message says."},
	{"config-deprecated", SeverityWarning, ScopeFile,
		"`config` keys use their current snake_case names (`passing_score`, `nonce_validity_minutes`, `prompt_id`, `max_score`), not the camelCase spellings of the first certification SIPs.",
		"Rename the key as the message says; the old spelling still works for now."},
	{"script-path-invalid", SeverityError, ScopeFile,
		"`executable.script_path` is a relative path inside the repository.",
		"Use a path such as `scripts/check.sh` with no `..` and no leading `/`, or omit the field."},
	{"body-empty", SeverityWarning, ScopeFile,
		"The Markdown body after the frontmatter describes the evaluation.",
		"Write at least a heading and a paragraph describing what the evaluation tests."},
	{"body-title", SeverityWarning, ScopeFile,
		"The body has one level-1 heading, its title, and it names the SIP (`# SIP-<N>: <name>`); case, punctuation and trailing parentheticals do not matter.",
		"Start the body with `# SIP-<N>: <name>` and make other headings level 2 or deeper."},
	{"body-sections", SeverityWarning, ScopeFile,
		"The body has the level-2 sections its type needs: a process SIP Abstract, Motivation, Specification and Rationale; an evaluation How it runs (or Procedure, Certification process) and Passing (or Scoring, Grading, Rubric). A heading counts when it starts with the section's name, ignoring case, punctuation, a section number and a trailing parenthetical (`## 3. Procedure (Proctor Script)`, `## Passing Score`). A repository sets its own sections, with synonyms as `A | B`, in its policy file (`sections`).",
		"Add the missing `## ` section the message names."},
	{"body-too-complex", SeverityError, ScopeFile,
		"The body stays within what a Markdown parser handles in time proportional to its size: quotes and lists nested at most 32 deep (counting two columns of indentation as a level), at most 100,000 table cells in all (header columns × rows, as GitHub pads short rows), and inline markers (brackets, parentheses, `*`, `_`, `~`, backticks, `<`) times the length of their paragraph, summed over paragraphs, at most 268,435,456. Such a body is not parsed, so the other body rules do not run on it.",
		"Follow the message: nest less, split big tables, or break long paragraphs with blank lines and escape literal markers with a backslash."},
	{"body-links", SeverityError, ScopeRepository,
		"Relative links and anchors in the body resolve: to a file of the repository, and to a heading of the linked SIP (or of this one, for `#anchor`).",
		"Correct the path (relative to the SIP's folder) or the anchor (the heading in lower case, spaces as hyphens, punctuation dropped)."},
	{"body-refs", SeverityError, ScopeFile,
		"Prompt and question ids the body cites in backticks (in an id column of a table, or starting like one of the SIP's ids) are defined in its config.",
		"Cite the id exactly as `config` defines it; the message suggests the nearest one."},
	{"answer-key-public", SeverityWarning, ScopeFile,
		"An active benchmark that awards points keeps its answers sealed (`answer_sealed`), not in the clear.",
		"Run `sip seal --recipient <the registry's age1… key> FILE`: it replaces each `answer` with `answer_sealed`."},
	{"reveal-score-oracle", SeverityWarning, ScopeFile,
		"An evaluation that awards points or has sealed answers does not choose `reveal: score`: a failed attempt's score, one changed answer at a time, reads off the answer key.",
		"Remove `reveal: score` (such an evaluation reveals only pass or fail by default), or set `reveal: pass_fail` or `none`."},
	{"answer-longest-choice", SeverityWarning, ScopeFile,
		"In most of a benchmark's multiple-choice questions the right choice is not the longest by far (a fifth longer than every other): otherwise always choosing the longest passes. Checked on answers in the clear, so before `sip seal`.",
		"Reword the choices so that the wrong ones are as long and as specific as the right one."},
	{"first-proctor-missing", SeverityWarning, ScopeFile,
		"An active proctored or live class work SIP names a way to get its first proctor: a proctor by agent id (`config.proctor.proctors`) or a qualification other than itself (`config.proctor.qualification`). Otherwise its proctors must hold its own pass, which only a proctor can give.",
		"Name the first proctors by agent id, or qualify proctors by a pass of another evaluation."},
	{"sealed-answer-invalid", SeverityError, ScopeFile,
		"Each sealed answer opens with the registry's key, for its own SIP and question as written (id, prompt, choices), to one of the question's choices (checked where the key is: the App's check run says only that the SIP's sealed answers must be sealed again; `sip validate --sealing-key` names each one and why).",
		"Seal the answer again with `sip seal` to the key `GET /api/v1/sealing-key` names."},
	{"file-location", SeverityError, ScopeRepository,
		"A SIP lives directly in the SIP folder (`evaluations/SIP-<N>.md`); no Markdown file in a subfolder is read as a SIP.",
		"Move the file up to `evaluations/SIP-<N>.md`, or out of the SIP folder."},
	{"file-name-mismatch", SeverityError, ScopeRepository,
		"The file is named `SIP-<sip>.md` after its own number.",
		"Rename the file to match `sip`, or correct `sip`."},
	{"sip-duplicate", SeverityError, ScopeRepository,
		"No two SIPs share a number.",
		"Take the next free number (`sip new` picks it) and rename the file to match."},
	{"id-duplicate", SeverityError, ScopeRepository,
		"No two SIPs share an id.",
		"Choose an id that no other SIP uses."},
	{"prerequisite-missing", SeverityError, ScopeRepository,
		"Every prerequisite names the id of a SIP in the repository.",
		"Use the evaluation's id (e.g. `poaw`), not its number or name."},
	{"credential-issuer-untrusted", SeverityError, ScopeFile,
		"A prerequisite met by another registry's credential (`- credential: {issuer: did:web:…, achievement: https://…}`) names an issuer in the policy's `trusted_issuers`.",
		"Add the issuer to `trusted_issuers` in .github/sip.yml (an admin approves that), or require a local evaluation instead."},
	{"prerequisite-duplicate", SeverityWarning, ScopeRepository,
		"A prerequisite is listed once.",
		"Remove the repeated entry."},
	{"prerequisite-cycle", SeverityError, ScopeRepository,
		"Prerequisites form no cycle, and no SIP requires itself.",
		"Remove one prerequisite of the cycle shown in the message."},
	{"prerequisite-status", SeverityError, ScopeRepository,
		"An active SIP requires only active SIPs, and a prerequisite is an evaluation, not a process SIP.",
		"Activate the prerequisite first, or keep this SIP in draft."},
	{"sip-renumbered", SeverityError, ScopeEdit,
		"`sip` never changes once merged.",
		"Restore the merged number; a new number means a new SIP file."},
	{"id-changed", SeverityError, ScopeEdit,
		"`id` never changes once merged (results and prerequisites refer to it).",
		"Restore the merged id."},
	{"version-not-bumped", SeverityError, ScopeEdit,
		"A changed SIP raises `version` (semver greater than the base).",
		"Raise PATCH for wording, MINOR for new material, MAJOR for changes that invalidate past results."},
	{"updated-at-not-advanced", SeverityError, ScopeEdit,
		"A changed SIP moves `updated_at` forward.",
		"Set updated_at to the time of this change (use a full timestamp for a second change on the same day)."},
	{"status-transition", SeverityError, ScopeEdit,
		"Status moves only draft → active → deprecated, or draft → deprecated.",
		"Restore the previous status; a deprecated SIP stays deprecated."},
	{"sip-deleted", SeverityError, ScopeEdit,
		"A merged SIP file is never deleted.",
		"Restore the file and set `status: deprecated` instead."},
	{"author-unknown", SeverityError, ScopeGitHub,
		"Every @handle in `author` is a GitHub user (the approval policy may let them approve changes to the SIP).",
		"Write the GitHub login after @, e.g. `Ada Lovelace (@ada)`, or drop the @ for an author without one."},
	{"number-collision", SeverityError, ScopeEdit,
		"A new SIP's number is not claimed by an open pull request opened earlier: of the pull requests that claim one number, the earliest keeps it.",
		"Take the next free number, which the message names, and rename the file to match."},
}

// RuleByID returns the rule with the given id.
func RuleByID(id string) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
