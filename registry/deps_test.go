package registry_test

import (
	"os/exec"
	"strings"
	"testing"
)

// deps lists the packages a package depends on.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestImportGraph keeps the layers apart: the domain reaches no network,
// database or GitHub; storage packages do not import each other; the API
// and the bot do not import each other or a concrete store.
func TestImportGraph(t *testing.T) {
	t.Parallel()
	const mod = "github.com/sipregistry/sip/"
	for _, tt := range []struct {
		pkg    string
		banned []string
	}{
		{mod + "registry", []string{"net/http", "database/sql", "github.com/labstack/echo", "github.com/jackc/pgx",
			"github.com/google/go-github", "github.com/go-git/go-git", "modernc.org/sqlite", mod + "api", mod + "bot"}},
		// The runtime reaches the judge through an interface, but imports
		// registry/judge for its prompts and scores, whose client is HTTP.
		{mod + "registry/evaluation", []string{"database/sql", "github.com/labstack/echo", "github.com/jackc/pgx",
			"github.com/google/go-github", "github.com/go-git/go-git", "modernc.org/sqlite", mod + "api", mod + "bot", mod + "registry/sqlite",
			mod + "registry/postgres"}},
		{mod + "registry/sqlite", []string{"github.com/jackc/pgx", mod + "registry/postgres", mod + "api", mod + "bot"}},
		{mod + "registry/postgres", []string{"modernc.org/sqlite", mod + "registry/sqlite", mod + "api", mod + "bot"}},
		{mod + "bot", []string{mod + "api", mod + "registry/sqlite", mod + "registry/postgres"}},
		{mod + "api", []string{mod + "bot", mod + "registry/sqlite", mod + "registry/postgres", "github.com/go-git/go-git"}},
	} {
		for _, dep := range deps(t, tt.pkg) {
			for _, banned := range tt.banned {
				if dep == banned || strings.HasPrefix(dep, banned+"/") {
					t.Errorf("%s depends on %s", tt.pkg, dep)
				}
			}
		}
	}
}
