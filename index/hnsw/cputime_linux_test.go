//go:build linux

package hnsw

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time consumed by the calling OS thread. Callers
// lock the goroutine to its thread around the measured section. On a shared,
// oversubscribed machine it is a much steadier speed measure than wall time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD, Linux >= 2.6.26
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU returns the CPU time consumed by the whole process (all
// threads, GC included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
