package registry_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

func TestGeneratedRepositoryIsValid(t *testing.T) {
	t.Parallel()
	files := siptest.Generate(500, 1)
	for _, p := range registry.Validate(registry.ParseFiles(files), registry.Options{}) {
		t.Errorf("%v", p)
	}
}

var benchSizes = []int{1_000, 10_000}

func totalBytes(files []registry.File) int64 {
	var n int64
	for _, f := range files {
		n += int64(len(f.Content))
	}
	return n
}

// BenchmarkValidate is what `sip validate` does once files are in memory:
// parse on every CPU, then the repository rules.
func BenchmarkValidate(b *testing.B) {
	for _, n := range benchSizes {
		files := siptest.Generate(n, 1)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(totalBytes(files))
			for b.Loop() {
				if ps := registry.Validate(registry.ParseFiles(files), registry.Options{}); len(ps) != 0 {
					b.Fatal(ps[0])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sip")
		})
	}
}

// BenchmarkValidateOneCPU does the same work on one goroutine, to compare
// with the bare decode below on equal terms.
func BenchmarkValidateOneCPU(b *testing.B) {
	for _, n := range benchSizes {
		files := siptest.Generate(n, 1)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(totalBytes(files))
			for b.Loop() {
				docs := make([]*registry.Document, len(files))
				for i, f := range files {
					docs[i] = registry.Parse(f.Path, f.Content)
				}
				if ps := registry.Validate(docs, registry.Options{}); len(ps) != 0 {
					b.Fatal(ps[0])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sip")
		})
	}
}

// BenchmarkBareYAMLNode is the floor: cut the frontmatter out with
// bytes.Index and decode it into yaml.v3 nodes, on one goroutine, with no
// checks at all.
func BenchmarkBareYAMLNode(b *testing.B) {
	benchBare(b, func(fm []byte) error {
		var n yaml.Node
		return yaml.Unmarshal(fm, &n)
	})
}

// BenchmarkBareYAMLMap is the floor of a naive tool: decode the
// frontmatter into map[string]any.
func BenchmarkBareYAMLMap(b *testing.B) {
	benchBare(b, func(fm []byte) error {
		var m map[string]any
		return yaml.Unmarshal(fm, &m)
	})
}

func benchBare(b *testing.B, decode func([]byte) error) {
	for _, n := range benchSizes {
		files := siptest.Generate(n, 1)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(totalBytes(files))
			sep := []byte("\n---\n")
			for b.Loop() {
				for _, f := range files {
					end := bytes.Index(f.Content[4:], sep)
					if err := decode(f.Content[4 : end+5]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sip")
		})
	}
}

// BenchmarkValidateFromDisk adds reading the files from a folder, as
// `sip validate evaluations` does.
func BenchmarkValidateFromDisk(b *testing.B) {
	for _, n := range benchSizes {
		dir := b.TempDir()
		for _, f := range siptest.Generate(n, 1) {
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Path)), f.Content, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				files, err := registry.ReadFS(os.DirFS(dir), ".", "evaluations")
				if err != nil {
					b.Fatal(err)
				}
				if ps := registry.Validate(registry.ParseFiles(files), registry.Options{}); len(ps) != 0 {
					b.Fatal(ps[0])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sip")
		})
	}
}

// BenchmarkRatioToFloor alternates the bare node decode (the floor) and
// the full validation in every iteration, all on one CPU (GOMAXPROCS 1,
// the collector included), and reports their ratio. Alternating keeps the
// ratio honest on a noisy shared machine. The full validation is what
// `sip validate` runs, ValidateFiles: each file's rules as it is parsed,
// only what the rules across files need kept. x-floor is the ratio of
// wall times; cpu-x-floor that of the process's CPU time (user + system),
// which does not count time spent waiting for a CPU and so moves far less
// when other work shares the machine. kept-cpu-x-floor is the CPU ratio
// of parsing every document and keeping them all for Validate, as the
// App's check does when it compares a pull request with its base.
func BenchmarkRatioToFloor(b *testing.B) {
	for _, n := range benchSizes {
		files := siptest.Generate(n, 1)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			var floor, full, floorCPU, fullCPU, keptCPU time.Duration
			sep := []byte("\n---\n")
			for b.Loop() {
				runtime.GC() // neither side pays for the other's garbage
				start, startCPU := time.Now(), processCPU(b)
				for _, f := range files {
					end := bytes.Index(f.Content[4:], sep)
					var node yaml.Node
					if err := yaml.Unmarshal(f.Content[4:end+5], &node); err != nil {
						b.Fatal(err)
					}
				}
				floor, floorCPU = floor+time.Since(start), floorCPU+processCPU(b)-startCPU
				runtime.GC()
				start, startCPU = time.Now(), processCPU(b)
				registry.ValidateFiles(files, registry.Options{})
				full, fullCPU = full+time.Since(start), fullCPU+processCPU(b)-startCPU
				runtime.GC()
				startCPU = processCPU(b)
				docs := make([]*registry.Document, len(files))
				for i, f := range files {
					docs[i] = registry.Parse(f.Path, f.Content)
				}
				registry.Validate(docs, registry.Options{})
				keptCPU += processCPU(b) - startCPU
			}
			b.ReportMetric(float64(full)/float64(floor), "x-floor")
			if floorCPU > 0 { // not measured where processCPU cannot tell
				b.ReportMetric(float64(fullCPU)/float64(floorCPU), "cpu-x-floor")
				b.ReportMetric(float64(keptCPU)/float64(floorCPU), "kept-cpu-x-floor")
			}
			b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N)/float64(n), "floor-ns/sip")
			b.ReportMetric(float64(full.Nanoseconds())/float64(b.N)/float64(n), "full-ns/sip")
		})
	}
}

// BenchmarkValidateSameNumber validates 3,000 files that all declare one
// number and one id (a pull request may carry that many).
func BenchmarkValidateSameNumber(b *testing.B) {
	files := sameNumber(3000)
	b.ReportAllocs()
	for b.Loop() {
		registry.Validate(registry.ParseFiles(files), registry.Options{Dir: "evaluations"})
	}
}
