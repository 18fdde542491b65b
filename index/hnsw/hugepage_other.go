//go:build !linux

package hnsw

import "unsafe"

// adviseHuge is a no-op where transparent huge pages are not available.
func adviseHuge(unsafe.Pointer, uintptr) {}
