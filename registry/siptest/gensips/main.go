// Command gensips writes a generated repository of valid SIPs (the mix of
// siptest.Generate) into a folder, for benchmarking `sip validate` and
// `sip sync` as a whole program:
//
//	go run ./registry/siptest/gensips -n 10000 /tmp/sips
//
// With -corpus it writes a real corpus renumbered -times times instead
// (siptest.Renumber), e.g. SafeMolt's ×250, 7,000 files:
//
//	go run ./registry/siptest/gensips -corpus registry/testdata/safemolt -times 250 /tmp/corpus
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
	corpus := flag.String("corpus", "", "a SafeMolt-shaped corpus folder to renumber instead of generating")
	times := flag.Int("times", 250, "with -corpus, how many copies")
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
	files := siptest.Generate(*n, *seed)
	if *corpus != "" {
		real, err := siptest.CorpusFiles(os.DirFS(*corpus))
		if err != nil || len(real) == 0 {
			fmt.Fprintln(os.Stderr, "gensips: -corpus:", err, len(real), "files")
			os.Exit(66)
		}
		files = siptest.Renumber(real, *times)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Path)), f.Content, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(74)
		}
	}
}
