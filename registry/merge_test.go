package registry_test

import (
	"fmt"
	"testing"

	"github.com/sipregistry/sip/registry"
)

func TestMergeFiles(t *testing.T) {
	t.Parallel()
	f := func(path, content string) registry.File { return registry.File{Path: path, Content: []byte(content)} }
	base := []registry.File{f("a", "1"), f("b", "1"), f("c", "1"), f("d", "1")}
	ours := []registry.File{f("a", "2"), f("b", "1"), f("c", "2"), f("e", "new on main")}        // main: a and c edited, d deleted, e added
	theirs := []registry.File{f("a", "1"), f("b", "3"), f("c", "3"), f("d", "1"), f("g", "new")} // pull request: b and c edited, g added
	merged, conflicts := registry.MergeFiles(base, ours, theirs)
	var got []string
	for _, m := range merged {
		got = append(got, m.Path+"="+string(m.Content))
	}
	if want := "[a=2 b=3 c=3 e=new on main g=new]"; fmt.Sprint(got) != want {
		t.Errorf("merged %v, want %s", got, want)
	}
	if fmt.Sprint(conflicts) != "[c]" {
		t.Errorf("conflicts %v, want [c]", conflicts)
	}
	t.Run("both sides alike", func(t *testing.T) {
		merged, conflicts := registry.MergeFiles([]registry.File{f("x", "1")}, []registry.File{f("x", "2")}, []registry.File{f("x", "2")})
		if len(conflicts) != 0 || len(merged) != 1 || string(merged[0].Content) != "2" {
			t.Errorf("merged %v, conflicts %v", merged, conflicts)
		}
	})
	t.Run("deleted by the pull request, edited on main", func(t *testing.T) {
		_, conflicts := registry.MergeFiles([]registry.File{f("x", "1")}, []registry.File{f("x", "2")}, nil)
		if fmt.Sprint(conflicts) != "[x]" {
			t.Errorf("conflicts %v, want [x]", conflicts)
		}
	})
	t.Run("added on both sides differently", func(t *testing.T) {
		_, conflicts := registry.MergeFiles(nil, []registry.File{f("x", "main")}, []registry.File{f("x", "pr")})
		if fmt.Sprint(conflicts) != "[x]" {
			t.Errorf("conflicts %v, want [x]", conflicts)
		}
	})
}
