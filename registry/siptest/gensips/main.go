// Command gensips writes a generated repository of valid SIPs (the mix of
// siptest.Generate) into a folder, for benchmarking `sip validate` and
// `sip sync` as a whole program:
//
//	go run ./registry/siptest/gensips -n 10000 /tmp/sips
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sipregistry/sip/registry/siptest"
)

func main() {
	n := flag.Int("n", 1000, "number of SIPs")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gensips [-n N] [-seed S] DIR")
		os.Exit(64)
	}
	dir := flag.Arg(0)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(73)
	}
	for _, f := range siptest.Generate(*n, *seed) {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Path)), f.Content, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(74)
		}
	}
}
