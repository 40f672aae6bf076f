//go:build unix

package sqlite

import (
	"os"
	"runtime/debug"
	"syscall"
)

// mapHeader maps the first page of f read-only and shared, so the WAL-index
// header is read without a system call; nil when f holds fewer than n
// bytes or cannot be mapped.
func mapHeader(f *os.File, n int) []byte {
	fi, err := f.Stat()
	if err != nil || fi.Size() < int64(n) {
		return nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return m
}

func unmapHeader(m []byte) { syscall.Munmap(m) }

// readMapped copies len(h) bytes of m into h, in order; false when the
// mapping faults (the file was cut short under it: SQLite truncates the
// -shm file only when no connection has it open, and the cache's own
// connection keeps it open, but a fault must not end the server).
func readMapped(h, m []byte) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	copy(h, m[:len(h)])
	return true
}
