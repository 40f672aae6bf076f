//go:build !linux

package metric

import "context"

// ProcessCollector collects nothing outside Linux, where client_golang's
// process collector reads /proc.
func ProcessCollector() Collector { return CollectorFunc(func(context.Context, *Scrape) {}) }
