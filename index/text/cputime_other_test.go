//go:build !unix

package text

import "time"

// processCPU is unavailable here; CPU metrics then read 0.
func processCPU() time.Duration { return 0 }
