package registry_test

import (
	"os/exec"
	"slices"
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
		pkg     string
		banned  []string
		allowed []string // exceptions to banned
	}{
		{mod + "registry", []string{"net/http", "database/sql", "github.com/labstack/echo", "github.com/jackc/pgx",
			"github.com/google/go-github", "github.com/go-git/go-git", "modernc.org/sqlite", mod + "api", mod + "bot"}, nil},
		// The runtime reaches the judge, X and other issuers through
		// interfaces that cmd/sip wires.
		{mod + "registry/evaluation", []string{mod + "registry/judge", mod + "registry/credential/webfetch", "database/sql", "github.com/labstack/echo", "github.com/jackc/pgx",
			"github.com/google/go-github", "github.com/go-git/go-git", "modernc.org/sqlite", mod + "api", mod + "bot", mod + "registry/sqlite",
			mod + "registry/postgres"}, nil},
		// The stores keep the App's inbox, and know nothing else of the App.
		{mod + "registry/sqlite", []string{"github.com/jackc/pgx", mod + "registry/postgres", mod + "api", mod + "bot"}, []string{mod + "bot/inbox"}},
		{mod + "registry/postgres", []string{"modernc.org/sqlite", mod + "registry/sqlite", mod + "api", mod + "bot"}, []string{mod + "bot/inbox"}},
		{mod + "bot/inbox", []string{"net/http", "database/sql", "github.com/jackc/pgx", "github.com/google/go-github", "modernc.org/sqlite",
			mod + "api", mod + "registry/sqlite", mod + "registry/postgres"}, nil},
		{mod + "bot", []string{mod + "api", mod + "registry/sqlite", mod + "registry/postgres"}, nil},
		// The policy language decides from what it is told: GitHub is
		// behind its Judge interface, which the App and the CLI implement.
		{mod + "bot/policy", []string{"net/http", "database/sql", "github.com/google/go-github", "github.com/go-git/go-git",
			mod + "api", mod + "registry/sqlite", mod + "registry/postgres"}, nil},
		{mod + "registry/credential", []string{mod + "registry/credential/webfetch", "database/sql", mod + "api", mod + "bot"}, nil},
		// HTTP adapts: the rules are the service's, the storage the stores'.
		// api imports no store, and api/boundary_test.go holds the rest:
		// no call through a contract a store implements, none in
		// api.Config. No OpenAPI library (tests use one): its JSON-schema
		// package compiles meta-schemas at start-up, which every sip
		// command pays.
		{mod + "api", []string{mod + "bot", mod + "registry/sqlite", mod + "registry/postgres", "github.com/go-git/go-git",
			"github.com/getkin/kin-openapi", "github.com/santhosh-tekuri/jsonschema"}, nil},
		// The services api takes besides the runtime: statistics and rate
		// limits count through interfaces the stores implement.
		{mod + "registry/stats", []string{"database/sql", "github.com/jackc/pgx", "modernc.org/sqlite",
			mod + "api", mod + "bot", mod + "registry/sqlite", mod + "registry/postgres"}, nil},
		{mod + "registry/ratelimit", []string{"net/http", "database/sql", "github.com/jackc/pgx", "modernc.org/sqlite",
			mod + "api", mod + "bot", mod + "registry/sqlite", mod + "registry/postgres"}, nil},
		// The importer reads its source itself and writes through the
		// import contract: it knows no store of ours, nor the API.
		{mod + "registry/safemolt", []string{mod + "api", mod + "bot", mod + "registry/sqlite", mod + "registry/postgres"}, nil},
	} {
		t.Run(strings.TrimPrefix(tt.pkg, mod), func(t *testing.T) {
			for _, dep := range deps(t, tt.pkg) {
				if slices.Contains(tt.allowed, dep) {
					continue
				}
				for _, banned := range tt.banned {
					if dep == banned || strings.HasPrefix(dep, banned+"/") {
						t.Errorf("%s depends on %s", tt.pkg, dep)
					}
				}
			}
		})
	}
}

// TestDomainReachesNoNetwork: no package of sip that the domain (the
// registry, the evaluation runtime, credentials) depends on imports
// net/http; the model client, X's oEmbed and other issuers' documents
// reach the runtime through interfaces that cmd/sip wires. json-gold, the
// JSON-LD library, imports it for a document loader sip never uses (its
// contexts are embedded).
func TestDomainReachesNoNetwork(t *testing.T) {
	t.Parallel()
	const mod = "github.com/sipregistry/sip/"
	for _, pkg := range []string{mod + "registry", mod + "registry/evaluation", mod + "registry/credential"} {
		t.Run(strings.TrimPrefix(pkg, mod), func(t *testing.T) {
			var ours []string
			for _, dep := range deps(t, pkg) {
				if strings.HasPrefix(dep, mod) {
					ours = append(ours, dep)
				}
			}
			out, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}, ours...)...).Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				fields := strings.Fields(line)
				if slices.Contains(fields[1:], "net/http") {
					t.Errorf("%s (a dependency of %s) imports net/http", fields[0], pkg)
				}
			}
		})
	}
}
