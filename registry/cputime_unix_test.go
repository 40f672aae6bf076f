//go:build unix

package registry_test

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time this process has used so far (user and
// system, every thread).
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
