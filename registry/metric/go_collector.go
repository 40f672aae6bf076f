package metric

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// GoCollector collects the Go runtime's metrics client_golang's Go
// collector serves by default, under the same names and help texts:
// go_goroutines, go_threads, go_info, go_gc_duration_seconds (a summary of
// the collections' pauses), go_gc_gogc_percent, go_gc_gomemlimit_bytes,
// go_sched_gomaxprocs_threads and the go_memstats_* family.
func GoCollector() Collector { return &goCollector{} }

type goCollector struct{}

type memstat struct {
	name, help string
	counter    bool
	value      func(*runtime.MemStats) float64
}

// memstats are the go_memstats_* metrics, from runtime.MemStats.
var memstats = [...]memstat{
	{"go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.Alloc) }},
	{"go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", true, func(m *runtime.MemStats) float64 { return float64(m.TotalAlloc) }},
	{"go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.BuckHashSys) }},
	{"go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", true, func(m *runtime.MemStats) float64 { return float64(m.Frees) }},
	{"go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.GCSys) }},
	{"go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.HeapAlloc) }},
	{"go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.HeapIdle) }},
	{"go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", false, func(m *runtime.MemStats) float64 { return float64(m.HeapInuse) }},
	{"go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", false, func(m *runtime.MemStats) float64 { return float64(m.HeapObjects) }},
	{"go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.HeapReleased) }},
	{"go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.HeapSys) }},
	{"go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", false, func(m *runtime.MemStats) float64 { return float64(m.LastGC) / 1e9 }},
	{"go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", true, func(m *runtime.MemStats) float64 { return float64(m.Mallocs) }},
	{"go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.MCacheInuse) }},
	{"go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.MCacheSys) }},
	{"go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.MSpanInuse) }},
	{"go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.MSpanSys) }},
	{"go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.NextGC) }},
	{"go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.OtherSys) }},
	{"go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.StackInuse) }},
	{"go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.StackSys) }},
	{"go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", false, func(m *runtime.MemStats) float64 { return float64(m.Sys) }},
}

// runtimeGauges are read with runtime/metrics.
var runtimeGauges = [...]struct{ name, help, metric string }{
	{"go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", "/gc/gogc:percent"},
	{"go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", "/gc/gomemlimit:bytes"},
	{"go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", "/sched/gomaxprocs:threads"},
}

func (goCollector) Collect(_ context.Context, s *Scrape) {
	s.Value(NewGaugeDesc("go_goroutines", "Number of goroutines that currently exist."), float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	s.Value(NewGaugeDesc("go_threads", "Number of OS threads created."), float64(threads))
	s.Value(NewGaugeDesc("go_info", "Information about the Go environment.", "version"), 1, runtime.Version())

	gc := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&gc)
	pauses := sample{sum: gc.PauseTotal.Seconds(), count: uint64(gc.NumGC)}
	for i, q := range []float64{0, 0.25, 0.5, 0.75, 1} {
		pauses.buckets = append(pauses.buckets, bucket{bound: q, value: gc.PauseQuantiles[i].Seconds()})
	}
	s.add(newDesc("go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", typeSummary, nil), pauses)

	samples := make([]metrics.Sample, len(runtimeGauges))
	for i, g := range runtimeGauges {
		samples[i].Name = g.metric
	}
	metrics.Read(samples)
	for i, g := range runtimeGauges {
		switch v := samples[i].Value; v.Kind() {
		case metrics.KindUint64:
			s.Value(NewGaugeDesc(g.name, g.help), float64(v.Uint64()))
		case metrics.KindFloat64:
			s.Value(NewGaugeDesc(g.name, g.help), v.Float64())
		}
	}

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, m := range memstats {
		d := NewGaugeDesc(m.name, m.help)
		if m.counter {
			d = NewCounterDesc(m.name, m.help)
		}
		s.Value(d, m.value(&ms))
	}
}
