//go:build race

package fuse

// raceEnabled: under -race sync.Pool drops items at random, so allocation
// counts are not meaningful.
const raceEnabled = true
