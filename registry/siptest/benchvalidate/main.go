//go:build unix

// Command benchvalidate measures `sip validate` next to its floor and its
// peer in one run, so that their ratios mean something on a shared,
// noisy machine: the commands run in turn, round after round, and each
// run's CPU time (user + system), wall time and peak RSS are taken from
// the operating system. `make bench-validate` runs it on SafeMolt's
// corpus ×250:
//
//	go run ./registry/siptest/benchvalidate -rounds 5 \
//		-sip 'bin/sip validate DIR' -floor 'bin/floor DIR' -peer 'node graymatter.js DIR'
//
// It prints each command's minimum and median, and the ratios of sip to
// the floor and to the peer in CPU time (the figure load disturbs
// least; wall time on a loaded machine is mostly waiting for a CPU),
// median of the per-round ratios, with their spread.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

type sample struct {
	cpu, wall time.Duration
	rssKB     int64
}

// run runs one command line (split at spaces) with its output discarded.
func run(line string) (sample, error) {
	args := strings.Fields(line)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		return sample{}, err
	}
	// sip validate exits 65 when it finds errors, as it does on this
	// corpus: only a command that did not run at all is a failure.
	u, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, fmt.Errorf("%s: no resource usage", line)
	}
	cpu := time.Duration(u.Utime.Nano() + u.Stime.Nano())
	return sample{cpu: cpu, wall: wall, rssKB: u.Maxrss}, nil
}

func median(d []float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func seconds(d []time.Duration) []float64 {
	out := make([]float64, len(d))
	for i, x := range d {
		out[i] = x.Seconds()
	}
	return out
}

func main() {
	sip := flag.String("sip", "bin/sip validate .cache/corpus250", "the command measured")
	floor := flag.String("floor", "bin/floor .cache/corpus250", "its floor: read and decode the same files")
	peer := flag.String("peer", "", "its peer (gray-matter + js-yaml), when installed")
	rounds := flag.Int("rounds", 5, "rounds; each runs every command once, in turn")
	warmup := flag.Int("warmup", 1, "rounds run first and not counted (file cache)")
	before := flag.String("before", "", "optionally, an earlier build of sip validate, measured in the same rounds")
	flag.Parse()

	names := []string{"sip validate", "floor"}
	lines := []string{*sip, *floor}
	if *peer != "" {
		names, lines = append(names, "peer"), append(lines, *peer)
	}
	if *before != "" {
		names, lines = append(names, "sip validate before"), append(lines, *before)
	}
	samples := make([][]sample, len(lines))
	for r := range *warmup + *rounds {
		for i, line := range lines {
			s, err := run(line)
			if err != nil {
				fmt.Fprintf(os.Stderr, "benchvalidate: %s: %v\n", line, err)
				os.Exit(70)
			}
			if r >= *warmup {
				samples[i] = append(samples[i], s)
			}
		}
	}

	fmt.Printf("%d rounds, commands in turn; CPU = user + system\n\n", *rounds)
	fmt.Printf("| command | CPU min | CPU median | wall min | wall median | peak RSS max |\n|---|---:|---:|---:|---:|---:|\n")
	for i, name := range names {
		var cpu, wall []time.Duration
		var rss int64
		for _, s := range samples[i] {
			cpu, wall = append(cpu, s.cpu), append(wall, s.wall)
			rss = max(rss, s.rssKB)
		}
		fmt.Printf("| %s (`%s`) | %.2f s | %.2f s | %.2f s | %.2f s | %d MB |\n", name, lines[i],
			slices.Min(seconds(cpu)), median(seconds(cpu)), slices.Min(seconds(wall)), median(seconds(wall)), rss/1024)
	}
	fmt.Println()
	for i := 1; i < len(names); i++ {
		var cpu, wall []float64
		for r := range *rounds {
			cpu = append(cpu, samples[0][r].cpu.Seconds()/samples[i][r].cpu.Seconds())
			wall = append(wall, samples[0][r].wall.Seconds()/samples[i][r].wall.Seconds())
		}
		fmt.Printf("sip validate / %s: CPU %.2f (rounds %.2f to %.2f), wall %.2f (rounds %.2f to %.2f)\n", names[i],
			median(cpu), slices.Min(cpu), slices.Max(cpu), median(wall), slices.Min(wall), slices.Max(wall))
	}
}
