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
// 26) cost 20-25 %.
const (
	Headroom     = 1 << 30
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
		// Only a change of a fifth or more: setting the percent stops the
		// world, and the live heap moves a little at every collection.
		if p := gcPercent(live); p*5 < cur*4 || p*4 > cur*5 {
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
