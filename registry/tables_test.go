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

// TestTableLoopsRunSubtests: every table test in the repository runs
// each case as a subtest. A loop over a slice or map of struct cases
// (written in the range clause, or in a variable of the same function)
// whose body reports failures itself (t.Error…, t.Fatal…) must call
// t.Run, so that a failure names its case and one case's Fatal does not
// hide the rest.
func TestTableLoopsRunSubtests(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	loops := 0
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
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			tables := structSlices(fn.Body)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				loop, ok := n.(*ast.RangeStmt)
				if !ok || !overTable(loop.X, tables) {
					return true
				}
				loops++
				if reports, runs := reportsAndRuns(loop.Body); reports && !runs {
					t.Errorf("%s: a table loop reports failures without t.Run: run each case as a subtest", fset.Position(loop.For))
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if loops < 100 {
		t.Fatalf("found %d table loops; the walk is broken", loops)
	}
}

// structSlices are the variables a function body sets to a literal slice
// or map of structs.
func structSlices(body *ast.BlockStmt) map[string]bool {
	names := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, rhs := range n.Rhs {
				if id, ok := n.Lhs[min(i, len(n.Lhs)-1)].(*ast.Ident); ok && isStructSlice(rhs) {
					names[id.Name] = true
				}
			}
		case *ast.ValueSpec:
			for i, v := range n.Values {
				if i < len(n.Names) && isStructSlice(v) {
					names[n.Names[i].Name] = true
				}
			}
		}
		return true
	})
	return names
}

// isStructSlice reports whether e is a literal []struct{…}{…} or
// map[…]struct{…}{…}.
func isStructSlice(e ast.Expr) bool {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return false
	}
	var elt ast.Expr
	switch t := lit.Type.(type) {
	case *ast.ArrayType:
		elt = t.Elt
	case *ast.MapType:
		elt = t.Value
	}
	_, ok = elt.(*ast.StructType)
	return ok
}

// overTable reports whether a range clause walks a table: a literal
// slice of structs, or a variable set to one.
func overTable(x ast.Expr, tables map[string]bool) bool {
	if id, ok := x.(*ast.Ident); ok {
		return tables[id.Name]
	}
	return isStructSlice(x)
}

// reportsAndRuns reports whether a loop body calls t.Error…/t.Fatal… on
// the test itself (outside function literals, which are subtests or
// helpers), and whether it calls t.Run. A loop that only stops on an
// error (t.Fatal(err)) sets up rather than checks cases.
func reportsAndRuns(body *ast.BlockStmt) (reports, runs bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); !ok || (id.Name != "t" && id.Name != "b") {
			return true
		}
		switch sel.Sel.Name {
		case "Run":
			runs = true
		case "Error", "Errorf", "Fatalf":
			reports = true
		case "Fatal":
			// t.Fatal(err) alone is a loop that sets up, not a table
			if len(call.Args) != 1 || !isIdent(call.Args[0], "err") {
				reports = true
			}
		}
		return true
	})
	return reports, runs
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
