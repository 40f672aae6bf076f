package registry_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoUnusedContractMethods: every method of a store contract (an
// interface named …Store, or a consumer's interface of one) is called
// somewhere outside the stores that implement it and their conformance
// suite; a method nothing calls is a contract bigger than its consumers.
// Calls are matched by method name, so a name used elsewhere can hide an
// unused method, never the other way round. Nor is a contract named after
// its own package (evaluation.EvaluationStore).
func TestNoUnusedContractMethods(t *testing.T) {
	t.Parallel()
	type method struct{ iface, name string }
	var methods []method
	called := map[string]bool{}
	var stutters []string // contracts named after their package
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n != ".." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		slash := filepath.ToSlash(p)
		implements := strings.Contains(slash, "registry/sqlite/") || strings.Contains(slash, "registry/postgres/") ||
			strings.Contains(slash, "registry/registrytest/")
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if name := n.Name.Name; isContract(name) && ast.IsExported(name) && len(name) > len(f.Name.Name) &&
					strings.EqualFold(name[:len(f.Name.Name)], f.Name.Name) {
					stutters = append(stutters, fset.Position(n.Pos()).String()+": "+f.Name.Name+"."+name)
				}
				it, ok := n.Type.(*ast.InterfaceType)
				if !ok || implements || !isContract(n.Name.Name) {
					return true
				}
				for _, m := range it.Methods.List {
					for _, name := range m.Names {
						methods = append(methods, method{f.Name.Name + "." + n.Name.Name, name.Name})
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && !implements {
					called[sel.Sel.Name] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(methods) < 50 {
		t.Fatalf("found %d contract methods; the walk is broken", len(methods))
	}
	for _, s := range stutters {
		t.Errorf("%s: a contract named after its package stutters; name it after what it keeps", s)
	}
	for _, m := range methods {
		t.Run(m.iface+"."+m.name, func(t *testing.T) {
			if why, ok := onlyTestsCall[m.iface+"."+m.name]; ok {
				if called[m.name] {
					t.Errorf("%s is called now: strike it off onlyTestsCall (%s)", m.iface+"."+m.name, why)
				}
				return
			}
			if !called[m.name] {
				t.Errorf("%s.%s is called nowhere: drop it from the contract", m.iface, m.name)
			}
		})
	}
}

// onlyTestsCall are contract methods no program calls, only tests of
// other packages, each with why it stays for now.
var onlyTestsCall = map[string]string{
	"registry.Store.EntryByNumber": "the App's tests and the statistics benchmarks read entries by number through registry.Store",
}

// isContract reports whether an interface is a store contract: its name
// ends in Store (registry.Store, evaluation.JobStore, …) or names what a
// consumer reads or writes of one.
func isContract(name string) bool {
	for _, suffix := range []string{"Store", "store", "Reader", "reader", "Lister", "lister", "Lookup", "lookup"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}
