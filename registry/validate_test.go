package registry_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

func sipFile(n int, id, status string, prereqs ...string) registry.File {
	s := strings.Replace(validSIP, "sip: 2", fmt.Sprintf("sip: %d", n), 1)
	s = strings.Replace(s, "id: poaw", "id: "+id, 1)
	s = strings.Replace(s, "status: active", "status: "+status, 1)
	if len(prereqs) > 0 {
		s = strings.Replace(s, "author:", "prerequisites: ["+strings.Join(prereqs, ", ")+"]\nauthor:", 1)
	}
	return registry.File{Path: fmt.Sprintf("evaluations/SIP-%d.md", n), Content: []byte(s)}
}

func rules(ps []registry.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Rule+"@"+p.Path)
	}
	return out
}

func TestBundledEvaluationsAreValid(t *testing.T) {
	t.Parallel()
	files, err := registry.ReadFS(os.DirFS("../evaluations"), ".", "evaluations")
	if err != nil {
		t.Fatal(err)
	}
	docs := registry.ParseFiles(files)
	for _, p := range registry.Validate(docs, registry.Options{}) {
		t.Errorf("%v", p)
	}
	types := map[registry.Type]bool{}
	for _, d := range docs {
		types[d.SIP.Type] = true
	}
	for _, typ := range registry.Types {
		if !types[typ] {
			t.Errorf("no bundled SIP of type %s", typ)
		}
	}
}

func TestValidateOrderIsStable(t *testing.T) {
	t.Parallel()
	files := []registry.File{
		sipFile(3, "c", "active", "missing", "a"),
		sipFile(1, "a", "active", "b"),
		sipFile(2, "b", "draft", "a"),
		sipFile(2, "b", "active"),
	}
	files[3].Path = "evaluations/SIP-9.md"
	want := registry.Validate(registry.ParseFiles(files), registry.Options{})
	if len(want) < 6 {
		t.Fatalf("want every problem, got %v", rules(want))
	}
	for range 20 {
		shuffled := slices.Clone(files)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got := registry.Validate(registry.ParseFiles(shuffled), registry.Options{})
		if !slices.Equal(got, want) {
			t.Fatalf("order depends on input order:\n%v\n%v", rules(got), rules(want))
		}
	}
}

func TestCycleMessageNamesThePath(t *testing.T) {
	t.Parallel()
	ps := registry.Validate(registry.ParseFiles([]registry.File{
		sipFile(1, "a", "active", "b"),
		sipFile(2, "b", "active", "c"),
		sipFile(3, "c", "active", "a"),
		sipFile(4, "d", "active", "a"),
	}), registry.Options{})
	var msgs []string
	for _, p := range ps {
		if p.Rule == "prerequisite-cycle" {
			msgs = append(msgs, p.Path+": "+p.Message)
		}
	}
	// Once, on the SIP that closed the cycle (the highest number).
	want := []string{
		"evaluations/SIP-3.md: prerequisites form a cycle: c → a → b → c",
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("got %q, want %q", msgs, want)
	}
}

func TestLongPrerequisiteChain(t *testing.T) {
	t.Parallel()
	var files []registry.File
	const n = 5000
	for i := 1; i <= n; i++ {
		pre := []string{fmt.Sprintf("s%d", i+1)}
		if i == n {
			pre = []string{"s1"} // close one long cycle
		}
		files = append(files, sipFile(i, fmt.Sprintf("s%d", i), "active", pre...))
	}
	ps := registry.Validate(registry.ParseFiles(files), registry.Options{})
	if len(ps) != 1 || ps[0].Path != "evaluations/SIP-5000.md" || !strings.Contains(ps[0].Message, "(5,000 SIPs)") {
		t.Fatalf("want one cycle problem on SIP-5000 naming 5,000 SIPs, got %v", ps)
	}
}

func TestNumberCollision(t *testing.T) {
	t.Parallel()
	head := registry.ParseFiles([]registry.File{sipFile(1, "a", "active"), sipFile(2, "b", "active")})
	base := &registry.Snapshot{Name: "main", Docs: registry.ParseFiles([]registry.File{sipFile(1, "a", "active")})}
	claimed := map[int]string{1: "pull request #7", 2: "pull request #8"}
	got := rules(registry.Validate(head, registry.Options{Base: base, Claimed: claimed}))
	// SIP-1 is merged: the other pull request is the one that collides.
	if want := []string{"number-collision@evaluations/SIP-2.md"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestEditRulesFollowMovedFiles(t *testing.T) {
	t.Parallel()
	moved := sipFile(2, "b", "active")
	moved.Path = "evaluations/sub/SIP-2.md"
	base := &registry.Snapshot{Name: "main", Docs: registry.ParseFiles([]registry.File{sipFile(2, "b", "active")})}
	got := rules(registry.Validate(registry.ParseFiles([]registry.File{moved}), registry.Options{Base: base}))
	if len(got) != 0 {
		t.Errorf("a moved, unchanged file is not an edit: %v", got)
	}
}

// sameNumber is n files that all declare SIP-7 with one id.
func sameNumber(n int) []registry.File {
	files := make([]registry.File, n)
	for i := range files {
		f := siptest.SIP(7, "same-id", "active")
		f.Path = fmt.Sprintf("evaluations/SIP-%d.md", i+1)
		files[i] = f
	}
	return files
}

// TestDuplicateDiagnosticsAreBounded: 3,000 files sharing a number and an
// id give one problem per file and rule, each naming at most three others,
// so the report grows linearly.
func TestDuplicateDiagnosticsAreBounded(t *testing.T) {
	t.Parallel()
	ps := registry.Validate(registry.ParseFiles(sameNumber(3000)), registry.Options{Dir: "evaluations"})
	counts := map[string]int{}
	size := 0
	for _, p := range ps {
		counts[p.Rule]++
		size += len(p.Message)
	}
	if counts["sip-duplicate"] != 3000 || counts["id-duplicate"] != 3000 {
		t.Errorf("counts %v; want 3000 sip-duplicate and 3000 id-duplicate", counts)
	}
	if size > 3000*3*300 {
		t.Errorf("messages total %d bytes for 9,000 problems; want at most 300 bytes each", size)
	}
	want := "SIP number 7 is also used by evaluations/SIP-10.md:2, evaluations/SIP-100.md:2, evaluations/SIP-1000.md:2 and 2,996 more"
	for _, p := range ps {
		if p.Path == "evaluations/SIP-1.md" && p.Rule == "sip-duplicate" && p.Message != want {
			t.Errorf("message\n got %s\nwant %s", p.Message, want)
		}
	}
}

// TestConfigTypos: an unknown config key that is a near miss of a known
// one fails the run, since the real key silently keeps its default; a
// key that resembles none stays a warning.
func TestConfigTypos(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, key string
		want      registry.Severity
		hint      string
	}{
		{"one letter short", "timeout_second", registry.SeverityError, "Rename it to timeout_seconds"},
		{"camel case", "timeoutSeconds", registry.SeverityError, "Rename it to timeout_seconds"},
		{"two letters swapped", "timeuot_seconds", registry.SeverityError, "Rename it to timeout_seconds"},
		{"unrelated", "notes_for_reviewers", registry.SeverityWarning, "Remove it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(validSIP, "executable:", "config:\n  "+tc.key+": 30\nexecutable:", 1)
			var got []registry.Problem
			for _, p := range registry.Parse("evaluations/SIP-2.md", []byte(src)).Problems {
				if p.Rule == "field-unknown" {
					got = append(got, p)
				}
			}
			if len(got) != 1 || got[0].Severity != tc.want || !strings.HasPrefix(got[0].Hint, tc.hint) {
				t.Fatalf("got %v, want one %s field-unknown with hint %q…", got, tc.want, tc.hint)
			}
			if got[0].Line != 13 || got[0].Column != 3 {
				t.Errorf("at %d:%d, want 13:3", got[0].Line, got[0].Column)
			}
		})
	}
}

// TestUpdatedAtHintNamesTheTimestampForm: two edits on one day need a
// timestamp, and the hint says so with an example later than the base.
func TestUpdatedAtHintNamesTheTimestampForm(t *testing.T) {
	t.Parallel()
	base := registry.ParseFiles([]registry.File{sipFile(2, "poaw", "active")})
	edited := sipFile(2, "poaw", "active")
	edited.Content = []byte(strings.Replace(strings.Replace(string(edited.Content), `version: "1.0.0"`, `version: "1.0.1"`, 1), "Fetch", "Fetch it", 1))
	var got []registry.Problem
	for _, p := range registry.Validate(registry.ParseFiles([]registry.File{edited}), registry.Options{Base: &registry.Snapshot{Name: "main", Docs: base}}) {
		if p.Rule == "updated-at-not-advanced" {
			got = append(got, p)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].Hint, "2026-01-01T10:01:00Z") {
		t.Fatalf("got %v, want one updated-at-not-advanced whose hint shows 2026-01-01T14:30:00Z", got)
	}
}

// TestValidateFilesMatchesValidate: checking files with their trees
// released as they are checked finds exactly what checking the kept
// documents finds, in the same order, for every rule's example (broken
// and fixed), the SafeMolt corpus and links between files.
func TestValidateFilesMatchesValidate(t *testing.T) {
	t.Parallel()
	type input struct {
		files []registry.File
		opts  registry.Options
	}
	cases := map[string]input{}
	for _, rule := range registry.Rules {
		ex := loadExample(t, rule.ID)
		cases[rule.ID+"/bad"] = input{toFiles(ex.bad), ex.options(ex.bad)}
		cases[rule.ID+"/fixed"] = input{toFiles(ex.fixed()), ex.options(ex.fixed())}
	}
	corpus := readCorpus(t)
	cases["corpus"] = input{corpus, registry.Options{}}
	cases["corpus in evaluations"] = input{corpus, registry.Options{Dir: registry.DefaultDir, Severity: map[string]string{"body-sections": "off", "config-deprecated": "error"}}}

	linked, linkOpts := linkedFiles()
	cases["links between files"] = input{linked, linkOpts}
	reversed := slices.Clone(linked)
	slices.Reverse(reversed)
	cases["links between files, read in another order"] = input{reversed, linkOpts}

	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			want := registry.Validate(registry.ParseFiles(in.files), in.opts)
			got := registry.ValidateFiles(in.files, in.opts)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ValidateFiles differs from Validate (-want +got):\n%s", diff)
			}
		})
	}
}

// linkedFiles are SIP files whose bodies link to each other's anchors,
// rightly and wrongly, one of them broken and two sharing a number, with
// options that check their links.
func linkedFiles() ([]registry.File, registry.Options) {
	withBody := func(f registry.File, extra string) registry.File {
		f.Content = append(slices.Clip(f.Content), extra...)
		return f
	}
	linked := []registry.File{
		withBody(sipFile(1, "one", "active", "two"), "\nSee [two](SIP-2.md#how-it-runs), [gone](SIP-2.md#how-it-walks), [three](SIP-3.md), [bad](SIP-4.md#x), [self](#passing), [nowhere](SIP-9.md#a).\n"),
		withBody(sipFile(2, "two", "draft", "one"), "\n[back](SIP-1.md#passin) and [root](/evaluations/SIP-1.md#passing)\n"),
		withBody(sipFile(3, "two", "active", "missing"), "\n[file](SIP-1.md)\n"),
		{Path: "evaluations/SIP-4.md", Content: []byte("---\nsip: [\n---\n# Broken\n\n## X\n")},
		withBody(sipFile(2, "dup", "active"), "\n[one](SIP-1.md#nope)\n"),
	}
	linked[4].Path = "evaluations/SIP-5.md"
	opts := registry.Options{Dir: registry.DefaultDir, Claimed: map[int]string{3: "pull request #9"}}
	opts.Body.Exists = func(string) (exists, known bool) { return false, true }
	return linked, opts
}

// TestValidateReportedFiles: naming the files whose problems are wanted
// (sip validate FILE, with the SIPs beside it read for context) returns
// exactly their problems among those of checking every file, whether
// their own rules ran for the others or not.
func TestValidateReportedFiles(t *testing.T) {
	t.Parallel()
	linked, opts := linkedFiles()
	sets := map[string][]registry.File{"links between files": linked, "corpus": readCorpus(t)}
	for name, files := range sets {
		all := registry.Validate(registry.ParseFiles(files), opts)
		for _, f := range files {
			t.Run(name+"/"+f.Path, func(t *testing.T) {
				var want []registry.Problem
				for _, p := range all {
					if p.Path == f.Path {
						want = append(want, p)
					}
				}
				o := opts
				o.Reported = func(p string) bool { return p == f.Path }
				if diff := cmp.Diff(want, registry.ValidateFiles(files, o)); diff != "" {
					t.Errorf("ValidateFiles with Reported differs from the reported file's problems (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(want, registry.Validate(registry.ParseFiles(files), o)); diff != "" {
					t.Errorf("Validate with Reported differs from the reported file's problems (-want +got):\n%s", diff)
				}
			})
		}
	}
}
