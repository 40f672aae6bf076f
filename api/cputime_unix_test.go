//go:build unix

package api_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used so far (user and
// system, every thread).
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
