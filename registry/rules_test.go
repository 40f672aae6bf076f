package registry_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/seal"
)

// An example is the documented case of one rule: files that break it, the
// files that fix it, and optionally a base revision and claimed numbers.
// They live in testdata/rules/<rule>.txtar, and docs/rules.md is generated
// from them, so every documented example is known to behave as described.
type example struct {
	comment string
	bad     map[string][]byte
	fix     map[string][]byte // bad with these files replaced (or deleted)
	base    map[string][]byte // nil: no edit rules
	claimed map[int]string
	key     *seal.Key // the registry's sealing key, when the rule needs it
	users   map[string]bool
	trusted []string // the policy's trusted_issuers, when the example has them
}

func loadExample(t *testing.T, rule string) example {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "rules", rule+".txtar"))
	if err != nil {
		t.Fatalf("rule %s has no example: %v", rule, err)
	}
	ex := example{comment: strings.TrimSpace(string(ar.Comment)), bad: map[string][]byte{}, fix: map[string][]byte{}}
	for _, f := range ar.Files {
		data := expandExample(f.Data)
		switch {
		case f.Name == "sealing-key":
			k, err := seal.ParseKey(data)
			if err != nil {
				t.Fatalf("rule %s: %v", rule, err)
			}
			ex.key = k
		case f.Name == "trusted-issuers":
			ex.trusted = strings.Fields(string(data))
		case f.Name == "github-users":
			ex.users = map[string]bool{}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				login, exists, _ := strings.Cut(line, " ")
				ex.users[login] = exists == "exists"
			}
		case f.Name == "claimed":
			ex.claimed = map[int]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				n, who, _ := strings.Cut(line, " ")
				num, _ := strconv.Atoi(n)
				ex.claimed[num] = who
			}
		case strings.HasPrefix(f.Name, "fix/"):
			ex.fix[strings.TrimPrefix(f.Name, "fix/")] = data
		case strings.HasPrefix(f.Name, "base/"):
			if ex.base == nil {
				ex.base = map[string][]byte{}
			}
			ex.base[strings.TrimPrefix(f.Name, "base/")] = data
		default:
			ex.bad[f.Name] = data
		}
	}
	return ex
}

// expandExample turns the placeholders that txtar cannot hold into bytes:
// \xe9 into a Latin-1 byte, PAD_TO_LIMIT into padding past MaxFileSize.
func expandExample(data []byte) []byte {
	data = bytes.ReplaceAll(data, []byte(`\xe9`), []byte{0xe9})
	if i := bytes.Index(data, []byte("PAD_TO_LIMIT\n")); i >= 0 {
		data = append(data[:i:i], bytes.Repeat([]byte("x"), registry.MaxFileSize+1-i)...)
	}
	return data
}

func (ex example) fixed() map[string][]byte {
	out := map[string][]byte{}
	for p, c := range ex.bad {
		out[p] = c
	}
	for p, c := range ex.fix {
		if string(c) == "DELETE\n" {
			delete(out, p)
		} else {
			out[p] = c
		}
	}
	return out
}

// validate checks files with what the example gives the engine: a base,
// claimed numbers, a sealing key, GitHub users.
func (ex example) validate(files map[string][]byte) []registry.Problem {
	return registry.Validate(registry.ParseFiles(toFiles(files)), ex.options(files))
}

// options are what the example gives the engine for checking files.
func (ex example) options(files map[string][]byte) registry.Options {
	opts := registry.Options{Claimed: ex.claimed, Dir: registry.DefaultDir, Users: ex.users, TrustedIssuers: ex.trusted}
	opts.Body.Exists = func(p string) (exists, known bool) { _, ok := files[p]; return ok, true }
	if ex.key != nil {
		opts.Key = ex.key
	}
	if ex.base != nil {
		opts.Base = &registry.Snapshot{Name: "base", Docs: registry.ParseFiles(toFiles(ex.base))}
	}
	return opts
}

func toFiles(m map[string][]byte) []registry.File {
	var out []registry.File
	for p, c := range m {
		out = append(out, registry.File{Path: p, Content: c})
	}
	slices.SortFunc(out, func(a, b registry.File) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func TestRuleExamples(t *testing.T) {
	t.Parallel()
	for _, rule := range registry.Rules {
		t.Run(rule.ID, func(t *testing.T) {
			t.Parallel()
			ex := loadExample(t, rule.ID)
			bad := ex.validate(ex.bad)
			if !slices.ContainsFunc(bad, func(p registry.Problem) bool { return p.Rule == rule.ID }) {
				t.Errorf("example does not trigger %s; got %v", rule.ID, bad)
			}
			for _, p := range bad {
				if p.Rule == rule.ID && (p.Line < 1 || p.Message == "" || p.Hint == "") {
					t.Errorf("problem lacks a line, message or hint: %+v", p)
				}
			}
			for _, p := range ex.validate(ex.fixed()) {
				if p.Rule == rule.ID || p.Severity == registry.SeverityError {
					t.Errorf("fix still has a problem: %v", p)
				}
			}
		})
	}
}

// TestMessagesUseArticles renders every problem of every rule's example,
// and the corpus's, and checks that "a" and "an" fit the word after them.
func TestMessagesUseArticles(t *testing.T) {
	t.Parallel()
	var problems []registry.Problem
	for _, rule := range registry.Rules {
		ex := loadExample(t, rule.ID)
		problems = append(problems, ex.validate(ex.bad)...)
		problems = append(problems, ex.validate(ex.fixed())...)
	}
	problems = append(problems, registry.Validate(registry.ParseFiles(readCorpus(t)), registry.Options{})...)
	for _, r := range registry.Rules {
		problems = append(problems, registry.Problem{Rule: r.ID, Message: r.Summary, Hint: r.Help})
	}
	seen := map[string]bool{}
	for _, p := range problems {
		for _, text := range []string{p.Message, p.Hint} {
			if seen[text] {
				continue
			}
			seen[text] = true
			if m := wrongArticle.FindString(text); m != "" && !articleExceptions.MatchString(m) {
				t.Errorf("[%s] %q: %q", p.Rule, text, m)
			}
		}
	}
}

// wrongArticle matches "a" before a vowel and "an" before a consonant.
var (
	wrongArticle      = regexp.MustCompile(`(?i)\b(a [aeiou]\w*|an [b-df-hj-np-tv-z]\w*)`)
	articleExceptions = regexp.MustCompile(`(?i)^(a (one|uni|use|eu)\w*|an (hour|honest|sip|http|html|id|md|rfc|mit|x|llm|fm|sha)\w*)$`)
)

func TestEveryExampleIsARule(t *testing.T) {
	t.Parallel()
	names, _ := filepath.Glob(filepath.Join("testdata", "rules", "*.txtar"))
	for _, n := range names {
		id := strings.TrimSuffix(filepath.Base(n), ".txtar")
		if _, ok := registry.RuleByID(id); !ok {
			t.Errorf("%s documents a rule that does not exist", n)
		}
	}
}

func TestContractRuleIDs(t *testing.T) {
	t.Parallel()
	// The ids SIP-1 promises.
	for _, id := range strings.Fields(`yaml-syntax frontmatter-missing field-required field-type field-unknown
		field-enum id-format version-semver date-format file-name-mismatch sip-duplicate id-duplicate
		prerequisite-missing prerequisite-cycle prerequisite-status handler-unknown handler-type-mismatch
		config-invalid script-path-invalid sip-renumbered id-changed version-not-bumped
		updated-at-not-advanced status-transition sip-deleted number-collision`) {
		if _, ok := registry.RuleByID(id); !ok {
			t.Errorf("rule %s is missing from the catalogue", id)
		}
	}
}

func TestRulesDocIsCurrent(t *testing.T) {
	got := renderRulesDoc(t)
	path := filepath.Join("..", "docs", "rules.md")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/rules.md is out of date; run: go test ./registry -run TestRulesDocIsCurrent -update")
	}
}
