//go:build !linux

package hnsw

import "time"

func threadCPU() time.Duration { return 0 }
