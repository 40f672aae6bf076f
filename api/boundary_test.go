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

// remainingStoreCalls are the store methods api calls itself, by file:
// only the registry's catalog (SIPs, versions, the sync state, a ping),
// which decides nothing about agents. Agents, attempts, results, jobs and
// sessions are the evaluation service's. TestStoreCallsOnlyShrink fails
// on a call that is not here, and on one here that is gone (strike it
// off).
var remainingStoreCalls = []string{
	"catalog.go store.Entries",
	"catalog.go store.SyncState",
	"contribute.go store.Content",
	"evaluations.go store.Versions",
	"health.go store.Ping",
	"web_pages.go store.Versions",
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
