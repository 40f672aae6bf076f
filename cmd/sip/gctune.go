package main

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gcHeadroom is how far the heap of `sip serve` may grow past what is live
// before a collection, when that is more than the runtime's default (as
// much again as is live). A server's live heap is small (the registry and
// the cached pages: tens of megabytes) while every request allocates; with
// the default, collections ran often and cost a tenth of the CPU of a
// cached API request. With 128 MiB of headroom they run a few times less
// often; a larger heap (over 128 MiB live) gets the default.
const gcHeadroom = 128 << 20

// tuneCollector sets the collector's GOGC from the live heap now and then
// every interval until ctx ends, unless GOGC or GOMEMLIMIT is set (an
// operator's choice stands).
func tuneCollector(ctx context.Context, getenv func(string) string, interval time.Duration) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(gcPercent(0))
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetGCPercent(gcPercent(sample[0].Value.Uint64()))
			}
		}
	}()
}

// gcPercent is the GOGC that gives a heap of live bytes gcHeadroom to grow,
// between the default 100 and 800.
func gcPercent(live uint64) int {
	if live == 0 {
		return 800 // nothing measured yet: start-up, whose heap is mostly the sync's garbage
	}
	return int(min(800, max(100, gcHeadroom*100/live)))
}
