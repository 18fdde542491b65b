//go:build !loong64

package shapes

// archName names the architecture.
func archName() string { return "other" }
