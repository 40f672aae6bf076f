package api_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAPICallsNoStore keeps HTTP an adapter: api reaches the registry,
// agents, attempts, results, jobs, sessions, statistics and rate limits
// through services (registry.Catalog, evaluation.Service, stats.Service,
// ratelimit.Limiter) that cmd/sip builds over the stores, never a store
// itself. The package is type-checked, and it fails on a call through an
// interface that a store implements, on an interface of api that a store
// implements (a contract api would hold), and on a field of Config whose
// type a store implements.
func TestAPICallsNoStore(t *testing.T) {
	t.Parallel()
	const mod = "github.com/sipregistry/sip/"
	stores := []string{mod + "registry/sqlite", mod + "registry/postgres"}
	out, err := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", mod + "api"}, stores...)...).Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if f, ok := exports[path]; ok {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})

	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := (&types.Config{Importer: imp}).Check(mod+"api", fset, files, info)
	if err != nil {
		t.Fatalf("type-checking api: %v", err)
	}

	var storeTypes []types.Type
	for _, path := range stores {
		p, err := imp.Import(path)
		if err != nil {
			t.Fatal(err)
		}
		obj := p.Scope().Lookup("Store")
		if obj == nil {
			t.Fatalf("%s has no Store", path)
		}
		storeTypes = append(storeTypes, types.NewPointer(obj.Type()))
	}
	// implementedByStore reports whether a store implements typ, an
	// interface with methods.
	implementedByStore := func(typ types.Type) bool {
		it, ok := typ.Underlying().(*types.Interface)
		if !ok || it.NumMethods() == 0 {
			return false
		}
		for _, st := range storeTypes {
			if types.Implements(st, it) {
				return true
			}
		}
		return false
	}

	calls := 0
	var through []string
	for sel, s := range info.Selections {
		if s.Kind() != types.MethodVal {
			continue
		}
		calls++
		if implementedByStore(s.Recv()) {
			through = append(through, fmt.Sprintf("%s: %s through %s, which a store implements: call a service instead", fset.Position(sel.Pos()), sel.Sel.Name, s.Recv()))
		}
	}
	if calls < 100 {
		t.Fatalf("found %d method calls in api; the check is broken", calls)
	}
	slices.Sort(through)
	for _, msg := range through {
		t.Error(msg)
	}
	for _, name := range pkg.Scope().Names() {
		if obj, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok && implementedByStore(obj.Type()) {
			t.Errorf("%s: api declares %s, which a store implements: a store contract belongs to the service that calls it", fset.Position(obj.Pos()), name)
		}
	}
	cfg, ok := pkg.Scope().Lookup("Config").Type().Underlying().(*types.Struct)
	if !ok {
		t.Fatal("api.Config is not a struct")
	}
	for f := range cfg.Fields() {
		if implementedByStore(f.Type()) {
			t.Errorf("api.Config.%s is a %s, which a store implements: Config takes services, not stores", f.Name(), f.Type())
		}
	}
}
