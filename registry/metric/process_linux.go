package metric

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ProcessCollector collects the process's metrics client_golang's process
// collector serves, under the same names and help texts, read from /proc
// when scraped: process_cpu_seconds_total, process_open_fds,
// process_max_fds, process_virtual_memory_bytes,
// process_virtual_memory_max_bytes, process_resident_memory_bytes,
// process_start_time_seconds, and process_network_receive_bytes_total and
// process_network_transmit_bytes_total (of the process's network
// namespace). A file that cannot be read leaves its metrics out.
func ProcessCollector() Collector { return &processCollector{} }

type processCollector struct {
	once  sync.Once
	start float64 // seconds since the epoch, 0 when unknown
}

// userHZ is the unit of /proc's CPU times (USER_HZ, 100 on every Linux
// architecture Go supports).
const userHZ = 100

func (c *processCollector) Collect(_ context.Context, s *Scrape) {
	if st, ok := readStat(); ok {
		c.once.Do(func() { c.start = startTime(st.start) })
		s.Value(NewCounterDesc("process_cpu_seconds_total", "Total user and system CPU time spent in seconds."), float64(st.utime+st.stime)/userHZ)
		s.Value(NewGaugeDesc("process_virtual_memory_bytes", "Virtual memory size in bytes."), float64(st.vsize))
		s.Value(NewGaugeDesc("process_resident_memory_bytes", "Resident memory size in bytes."), float64(st.rss*uint64(os.Getpagesize())))
		if c.start > 0 {
			s.Value(NewGaugeDesc("process_start_time_seconds", "Start time of the process since unix epoch in seconds."), c.start)
		}
	}
	if f, err := os.Open("/proc/self/fd"); err == nil {
		names, err := f.Readdirnames(-1)
		f.Close()
		if err == nil {
			s.Value(NewGaugeDesc("process_open_fds", "Number of open file descriptors."), float64(len(names)))
		}
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		s.Value(NewGaugeDesc("process_max_fds", "Maximum number of open file descriptors."), float64(lim.Cur))
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
		s.Value(NewGaugeDesc("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes."), float64(lim.Cur))
	}
	if in, out, ok := readNetstat(); ok {
		s.Value(NewCounterDesc("process_network_receive_bytes_total", "Number of bytes received by the process over the network."), float64(in))
		s.Value(NewCounterDesc("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network."), float64(out))
	}
}

type procStat struct{ utime, stime, start, vsize, rss uint64 }

// readStat reads /proc/self/stat (proc(5)): the fields after the command
// name, from the third (state) on.
func readStat() (procStat, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return procStat{}, false
	}
	var st procStat
	for _, v := range []struct {
		into  *uint64
		field int // as numbered in proc(5)
	}{{&st.utime, 14}, {&st.stime, 15}, {&st.start, 22}, {&st.vsize, 23}, {&st.rss, 24}} {
		n, err := strconv.ParseUint(f[v.field-3], 10, 64)
		if err != nil {
			return procStat{}, false
		}
		*v.into = n
	}
	return st, true
}

// startTime is the process's start in seconds since the epoch: the boot
// time (btime of /proc/stat) plus the start in clock ticks after boot.
func startTime(ticks uint64) float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			boot, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0
			}
			return float64(boot) + float64(ticks)/userHZ
		}
	}
	return 0
}

// readNetstat reads the bytes received and sent (InOctets, OutOctets of
// IpExt) from /proc/self/net/netstat, a line of names then one of values.
func readNetstat() (in, out uint64, ok bool) {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	var names []string
	for line := range strings.Lines(string(b)) {
		rest, found := strings.CutPrefix(line, "IpExt:")
		if !found {
			continue
		}
		if names == nil {
			names = strings.Fields(rest)
			continue
		}
		var gotIn, gotOut bool
		for i, v := range strings.Fields(rest) {
			if i >= len(names) {
				break
			}
			switch names[i] {
			case "InOctets":
				in, err = strconv.ParseUint(v, 10, 64)
				gotIn = err == nil
			case "OutOctets":
				out, err = strconv.ParseUint(v, 10, 64)
				gotOut = err == nil
			}
		}
		return in, out, gotIn && gotOut
	}
	return 0, 0, false
}
