package credential

import (
	"fmt"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process used so far: on a loaded machine
// it varies far less than wall time.
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// passes numbers the passes the benchmarks issue, so none is issued twice.
var passes atomic.Int64

// BenchmarkIssueFirst issues a credential never issued before (a new
// pass each time, so the kept credentials never answer), reporting the
// median and the CPU time per credential.
func BenchmarkIssueFirst(b *testing.B) {
	i := testIssuer(b, 1)
	var times []time.Duration
	cpu := cpuTime(b)
	for b.Loop() {
		p := testPass()
		p.CredentialURL = fmt.Sprintf("%s/%d", p.CredentialURL, passes.Add(1))
		start := time.Now()
		if _, err := i.Issue(p); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	reportCPU(b, cpu)
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
}

// BenchmarkIssueAgain issues a credential issued before (the download of
// a result's credential after the first).
func BenchmarkIssueAgain(b *testing.B) {
	i := testIssuer(b, 1)
	if _, err := i.Issue(testPass()); err != nil {
		b.Fatal(err)
	}
	defer reportCPU(b, cpuTime(b))
	for b.Loop() {
		if _, err := i.Issue(testPass()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonical canonicalises a badge (RDFC-1.0), the larger part of
// signing or verifying one.
func BenchmarkCanonical(b *testing.B) {
	doc := testIssuer(b, 1).Badge(testPass())
	defer reportCPU(b, cpuTime(b))
	for b.Loop() {
		if _, err := canonical(doc); err != nil {
			b.Fatal(err)
		}
	}
}
