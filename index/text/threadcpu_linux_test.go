package text

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the CPU time used by the calling OS thread so far
// (CLOCK_THREAD_CPUTIME_ID). Benchmarks lock the goroutine to its thread
// and take per-query differences: unlike wall time, they do not include
// time the thread spent waiting for a CPU on a busy machine.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	if _, _, e := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
