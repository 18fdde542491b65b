package compose

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// lenCache packs four entries to a word: neighbours' entries, written in
// any order and by racing goroutines, never disturb each other, and each
// answers what textLen says of its name, the first time and from the
// cache (the oracle: textLen itself).
func TestLenCacheEntries(t *testing.T) {
	names := map[uint32]string{}
	for id := range uint32(64) {
		switch id % 4 {
		case 0:
			names[id] = fmt.Sprintf("n%d", id)
		case 1:
			names[id] = "## heading-like " + strings.Repeat("x", int(id)) // escaped at a block start
		case 2:
			names[id] = strings.Repeat("é", 300) // cut at MaxNameRunes
		default:
			names[id] = "" // length 0
		}
	}
	names[1<<lenChunkBits+3] = "in the next chunk"
	var c lenCache
	calls := 0
	var mu sync.Mutex
	name := func(id uint32) string {
		mu.Lock()
		calls++
		mu.Unlock()
		return names[id]
	}
	check := func(id uint32) {
		runes, esc := c.get(id, name)
		wr, we := textLen(names[id], MaxNameRunes)
		if runes != wr || (esc == 1) != we {
			t.Errorf("id %d: %d/%d, textLen says %d/%v", id, runes, esc, wr, we)
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range uint32(64) {
				check((i*7 + uint32(g)*13) % 64) // every id, in another order per goroutine
			}
			check(1<<lenChunkBits + 3)
		}()
	}
	wg.Wait()
	before := calls
	for id := range names {
		check(id)
	}
	if calls != before {
		t.Errorf("%d names read again: the cached entries were lost", calls-before)
	}
}
