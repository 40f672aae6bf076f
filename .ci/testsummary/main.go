// Command testsummary reads `go test -json` on standard input, prints what
// plain `go test` would (each package's closing line, and the whole output
// of every test that failed), and ends with every skipped test and why.
//
//	go test -json ./... | go run ./.ci/testsummary [-fail-on-skip]
//
// It exits 1 when a test or a package failed, or, with -fail-on-skip, when
// anything was skipped; CI uses that so that a missing tool cannot pass as
// a green run.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type key struct{ pkg, test string }

type skip struct {
	key
	reason string
}

// summary holds what the stream said so far.
type summary struct {
	out      io.Writer
	output   map[key][]string // a running test's output, printed if it fails
	skipped  []skip
	failed   bool
	packages int
	// Tests (and subtests) by how they ended.
	passed, failedTests int
}

// reasonLine is a t.Log/t.Skip line in a test's output: "    file_test.go:12: why".
var reasonLine = regexp.MustCompile(`^\s+\S+\.go:\d+: (.*)$`)

func (s *summary) handle(ev event) {
	k := key{ev.Package, ev.Test}
	switch ev.Action {
	case "start":
		s.packages++
	case "output":
		if ev.Test == "" {
			// Package-level lines: go test's closing "ok"/"FAIL" lines, build
			// errors, a panic outside a test. Test-level "=== RUN" noise that
			// -json turns on is not among them.
			line := ev.Output
			if strings.HasPrefix(line, "=== ") || strings.HasPrefix(line, "--- PASS") || line == "PASS\n" || strings.HasPrefix(line, "--- SKIP") {
				return
			}
			fmt.Fprint(s.out, line)
			return
		}
		s.output[k] = append(s.output[k], ev.Output)
	case "build-output":
		fmt.Fprint(s.out, ev.Output)
	case "build-fail":
		s.failed = true
	case "fail":
		s.failed = true
		if ev.Test != "" {
			s.failedTests++
			for _, l := range s.output[k] {
				fmt.Fprint(s.out, l)
			}
		}
		delete(s.output, k)
	case "skip":
		if ev.Test != "" {
			s.skipped = append(s.skipped, skip{k, reason(s.output[k])})
		}
		delete(s.output, k)
	case "pass":
		if ev.Test != "" {
			s.passed++
		}
		delete(s.output, k)
	}
}

// reason is the message a skipped test gave: its last logged line(s).
func reason(lines []string) string {
	var msgs []string
	for _, l := range lines {
		if m := reasonLine.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil {
			msgs = append(msgs, m[1])
		}
	}
	if len(msgs) == 0 {
		return "(no reason given)"
	}
	return msgs[len(msgs)-1]
}

func (s *summary) report(failOnSkip bool) int {
	sort.Slice(s.skipped, func(i, j int) bool {
		a, b := s.skipped[i], s.skipped[j]
		if a.pkg != b.pkg {
			return a.pkg < b.pkg
		}
		return a.test < b.test
	})
	fmt.Fprintln(s.out)
	if len(s.skipped) == 0 {
		fmt.Fprintf(s.out, "== skipped tests: none (%d packages)\n", s.packages)
	} else {
		fmt.Fprintf(s.out, "== skipped tests: %d\n", len(s.skipped))
		for _, sk := range s.skipped {
			fmt.Fprintf(s.out, "SKIP %s %s: %s\n", sk.pkg, sk.test, sk.reason)
		}
	}
	// The plain closing line CI reads: counts of every test and subtest.
	fmt.Fprintf(s.out, "tests: %d passed, %d failed, %d skipped\n", s.passed, s.failedTests, len(s.skipped))
	switch {
	case s.failed:
		return 1
	case failOnSkip && len(s.skipped) > 0:
		fmt.Fprintln(s.out, "FAIL: tests were skipped (-fail-on-skip); install what they name (see .ci/run)")
		return 1
	}
	return 0
}

func main() {
	failOnSkip := flag.Bool("fail-on-skip", false, "exit 1 if any test was skipped")
	flag.Parse()
	os.Exit(run(os.Stdin, os.Stdout, *failOnSkip))
}

func run(in io.Reader, out io.Writer, failOnSkip bool) int {
	s := &summary{out: out, output: map[key][]string{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			// Not JSON: a line go test printed itself (e.g. a build error).
			fmt.Fprintln(out, sc.Text())
			continue
		}
		s.handle(ev)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(out, "testsummary:", err)
		return 1
	}
	return s.report(failOnSkip)
}
