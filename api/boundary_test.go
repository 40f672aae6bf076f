package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// remainingStoreCalls are the store methods api still calls itself, by
// file, rather than through the evaluation service. The list only
// shrinks: TestStoreCallsOnlyShrink fails on a call that is not here (a
// new rule decided in a handler), and on one here that is gone (strike
// it off).
var remainingStoreCalls = []string{
	"agents.go agents.AgentByName",
	"agents.go evals.AgentPoints",
	"auth.go agents.AgentByKeyID",
	"catalog.go store.Entries",
	"catalog.go store.SyncState",
	"credentials.go agents.AgentByID",
	"credentials.go evals.CredentialIndex",
	"credentials.go evals.Result",
	"credentials.go evals.RevokeResult",
	"credentials.go evals.RevokedIndexes",
	"evaluations.go store.Versions",
	"external.go evals.PutExternalCredential",
	"health.go store.Ping",
	"judged.go evals.Result",
	"judged.go jobs.Job",
	"judged.go jobs.JobByRegistration",
	"judged.go sessions.SessionByRegistration",
	"metrics.go store.JobStats",
	"results.go agents.AgentByID",
	"results.go evals.Result",
	"results.go evals.Results",
	"search.go agents.PublicAgentNames",
	"web.go agents.AgentNames",
	"web_pages.go agents.AgentByID",
	"web_pages.go agents.AgentByName",
	"web_pages.go evals.AgentPoints",
	"web_pages.go evals.PassCounts",
	"web_pages.go evals.Result",
	"web_pages.go evals.Results",
	"web_pages.go evals.Standings",
	"web_pages.go jobs.JobByRegistration",
	"web_pages.go sessions.SessionByRegistration",
	"web_pages.go store.Versions",
	"web_stats.go agents.PublicAgentNames",
}

// TestStoreCallsOnlyShrink keeps HTTP an adapter: api's handlers reach
// agents, results, jobs and sessions through the evaluation service, and
// the direct store calls left from before only go away.
func TestStoreCallsOnlyShrink(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if field, ok := sel.X.(*ast.SelectorExpr); ok {
				switch field.Sel.Name {
				case "agents", "evals", "jobs", "sessions", "store":
					found[f+" "+field.Sel.Name+"."+sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	var got []string
	for k := range found {
		got = append(got, k)
	}
	sort.Strings(got)
	for _, c := range got {
		if !slices.Contains(remainingStoreCalls, c) {
			t.Errorf("%s: a new direct store call; call the evaluation service instead", c)
		}
	}
	for _, c := range remainingStoreCalls {
		if !found[c] {
			t.Errorf("%s is no longer called: strike it off remainingStoreCalls", c)
		}
	}
}
