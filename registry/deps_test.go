package registry_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainImports keeps the domain package free of transport and
// storage: it must not reach the network, a database or GitHub.
func TestDomainImports(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/sipregistry/sip/registry").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"net/http", "database/sql", "github.com/labstack/echo", "github.com/jackc/pgx",
			"github.com/google/go-github", "github.com/go-git/go-git", "modernc.org/sqlite"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("registry depends on %s", dep)
			}
		}
	}
}
