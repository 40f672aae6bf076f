// Command floor is the floor of validating a SIP folder: read every file
// and decode its frontmatter into yaml.v3 nodes, on every CPU, with no
// checks at all. `make bench` and `make perfcheck` measure `sip validate`
// against it in the same run, since on a shared machine only ratios
// measured together mean something:
//
//	go run ./registry/siptest/floor DIR
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor DIR")
		os.Exit(64)
	}
	names, err := filepath.Glob(filepath.Join(os.Args[1], "*.md"))
	if err != nil || len(names) == 0 {
		fmt.Fprintln(os.Stderr, "floor: no .md files in", os.Args[1])
		os.Exit(66)
	}
	var next, nodes atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(names) {
					return
				}
				b, err := os.ReadFile(names[i])
				if err != nil {
					panic(err)
				}
				end := bytes.Index(b[4:], []byte("\n---"))
				if end < 0 {
					continue
				}
				var n yaml.Node
				if yaml.Unmarshal(b[4:end+5], &n) == nil {
					nodes.Add(int64(len(n.Content)))
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("%d files\n", len(names))
}
