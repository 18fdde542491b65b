package resident

import "testing"

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{100 << 20, 100},
		{Headroom, 100},
		{1 << 30, 100 * Headroom / (1 << 30)},
		{2 * Headroom, 50},
		{4 * Headroom, 25},
		{8 * Headroom, MinGCPercent},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// TestRetune: the tuner moves the percent once the one in force lets the
// headroom pass Headroom by more than a 32nd, or falls an eighth short.
func TestRetune(t *testing.T) {
	for _, c := range []struct {
		cur, p int
		want   bool
	}{
		{100, 100, false},
		{60, 57, true}, // the live heap grew 5 %: the headroom would pass Headroom by 5 %
		{58, 57, false},
		{59, 57, true},
		{57, 60, false}, // an eighth short at most: more collections, no more memory
		{52, 60, true},
		{25, 25, false},
	} {
		if got := retune(c.cur, c.p); got != c.want {
			t.Errorf("retune(%d, %d) = %v, want %v", c.cur, c.p, got, c.want)
		}
		// Once retuned, the tuner is at rest.
		if retune(c.p, c.p) {
			t.Errorf("retune(%d, %d) = true", c.p, c.p)
		}
	}
	// Headroom bound: a percent kept (not retuned) gives at most Headroom
	// plus a 32nd over any live heap.
	for live := uint64(1 << 30); live <= 8<<30; live += 64 << 20 {
		p := gcPercent(live)
		for cur := p; cur <= 100; cur++ {
			if !retune(cur, p) && uint64(cur)*live/100 > Headroom+Headroom/32 && p > MinGCPercent {
				t.Fatalf("live %d MiB: percent %d kept, headroom %d MiB", live>>20, cur, uint64(cur)*live/100>>20)
			}
		}
	}
}
