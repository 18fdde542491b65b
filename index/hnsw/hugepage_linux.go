//go:build linux

package hnsw

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks the kernel to back the 2 MiB pages covering b with
// transparent huge pages (rounded outwards).
func adviseHuge(p unsafe.Pointer, n uintptr) {
	const huge = 2 << 20
	start := uintptr(p) &^ (huge - 1)
	end := (uintptr(p) + n + huge - 1) &^ (huge - 1)
	syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_HUGEPAGE)
}
