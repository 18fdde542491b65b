package resident

import (
	"log/slog"
	"sync"
	"time"
)

// DropMappedWhile calls DropMapped(dir, suffixes...) every interval until
// the returned stop is called, then once more, and returns when that last
// call is done. Opening a store reads its tables from start to end: left
// alone, every page read stays resident until the end of the load, and the
// resident set peaks at the live heap plus the whole store (a 1M-node
// store: 1.9 GiB of heap and 1 GiB of table pages). Dropped as the load
// goes, the pages behind the load leave and the peak is the heap plus what
// one interval reads. A failed drop is logged at debug level (it costs
// memory only) and the next tick tries again.
func DropMappedWhile(log *slog.Logger, dir string, interval time.Duration, suffixes ...string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	drop := func() {
		if n, err := DropMapped(dir, suffixes...); err != nil {
			log.Debug("could not release mapped pages", "dir", dir, "err", err)
		} else {
			log.Debug("released mapped pages", "dir", dir, "mappedMiB", n>>20)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				drop()
				return
			case <-t.C:
				drop()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}
