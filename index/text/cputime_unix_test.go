//go:build unix

package text

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user+system) used by this process so far.
// Benchmarks report it beside wall time because shared CI machines are
// often oversubscribed, which inflates wall time but not CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
