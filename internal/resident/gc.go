package resident

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// GC headroom. Go's collector lets the heap grow to twice what is live
// (GOGC 100) before it collects: for a store whose graph is 2 GiB of live
// heap, 2 GiB more for garbage that a block's work makes in seconds. The
// tuner bounds that headroom to Headroom bytes once the live heap is
// larger, never below MinGCPercent. The collector's cost grows as its
// percent falls: on the 1M-node store (1.9 GiB live, percent 53) blocks/s
// fell by 12-15 % for 1.2 GiB less RSS; a headroom of 512 MiB (percent
// 26) cost 20-25 %. What sets the cost is how often it collects for a
// block's garbage: a block of that store made 91 KiB with the 1 GiB this
// once was, 62 KiB since issue 22's speed work, so 832 MiB collects less
// often a block (and marks a smaller live heap) and keeps the store's
// resident set under 3 GB while it serves (2.7-2.8 GiB after 40 s).
const (
	Headroom     = 832 << 20
	MinGCPercent = 25
)

// gcPercent is the GC percent for a live heap of live bytes: 100 while
// the headroom it gives is at most Headroom, then less, down to
// MinGCPercent.
func gcPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	p := int(uint64(100) * Headroom / live)
	return max(MinGCPercent, min(100, p))
}

// retune reports whether the percent cur should become p, the percent
// of the live heap now. The headroom is the resident set's bound: cur may
// pass p by a 32nd at most (a serving store's live heap grows as its
// caches fill: at a fifth, as this once was, the headroom of the 1M-node
// store reached 1.15 GiB, its resident set 3.1 GiB). Below p it may fall
// by an eighth, which costs collections, not memory. Setting the percent
// stops the world for microseconds, once an interval at most.
func retune(cur, p int) bool { return cur*32 > p*33 || cur*8 < p*7 }

// tuning is set once the process's tuner runs.
var tuning sync.Once

// TuneGC keeps the collector's percent at gcPercent of the live heap,
// read now and every interval until ctx ends, unless GOGC is set in the
// environment (the operator's choice wins). One tuner runs per process:
// later calls do nothing. It returns at once; log is told of each change.
func TuneGC(ctx context.Context, log *slog.Logger, interval time.Duration) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	first := false
	tuning.Do(func() { first = true })
	if !first {
		return
	}
	// The live heap is known at the end of a collection. After a load the
	// last one may be long past: with a large heap, collect now, before
	// any request is served, so that the percent is right from the start
	// and never drops under a serving process (a goal dropping below the
	// heap in use makes every allocation assist the collector at once).
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(heap)
	if heap[0].Value.Kind() == metrics.KindUint64 && heap[0].Value.Uint64() > Headroom {
		runtime.GC()
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	cur := 100
	tune := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		live := sample[0].Value.Uint64()
		if p := gcPercent(live); retune(cur, p) {
			debug.SetGCPercent(p)
			log.Debug("GC percent set for the live heap", "percent", p, "liveMiB", live>>20)
			cur = p
		}
	}
	tune()
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				tune()
			}
		}
	}()
}
