//go:build race

package compose

// raceEnabled: the race detector allocates on its own (and sync.Pool drops
// items at random under it), so allocation counts are not pinned then.
const raceEnabled = true
