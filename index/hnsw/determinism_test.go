package hnsw

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// graphDump is a graph's structure in canonical form: one line per present
// slot in id order (id, state, level, every layer's neighbour list in list
// order, every layer's reverse index as a sorted set), then the entry point,
// the counters and the ids TakeDirty reports. Two graphs with equal dumps
// answer every search the same way and persist the same records.
func graphDump(g *Graph) []string {
	g.slotMu.Lock()
	var out []string
	var buf [2 * maxM]uint32
	for ci, ch := range g.dir.Load().chunks {
		if ch == nil {
			continue
		}
		for slot := range uint32(chunkSize) {
			st := ch.state[slot].Load()
			if st&stPresent == 0 {
				continue
			}
			line := fmt.Sprintf("%d: state %#x", uint32(ci)<<chunkShift|slot, st)
			for l := 0; l <= levelOf(st); l++ {
				in := slices.Sorted(slices.Values(ch.in[slot][l]))
				line += fmt.Sprintf(" | L%d out %v in %v", l, loadList(buf[:0], g.links(ch, slot, l)), in)
			}
			out = append(out, line)
		}
	}
	id, level, ok := unpackEntry(g.entry.Load())
	out = append(out, fmt.Sprintf("entry %d level %d ok %v; live %d, tombstones %d", id, level, ok, g.live.Load(), g.tombstones.Load()))
	g.slotMu.Unlock()
	return append(out, fmt.Sprintf("dirty %v", g.TakeDirty()))
}

// sameDump reports the first difference between two dumps.
func sameDump(t *testing.T, what string, want, got []string) {
	t.Helper()
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			t.Fatalf("%s: graphs differ at line %d:\nwant %s\ngot  %s", what, i, want[i], got[i])
		}
	}
	if len(want) != len(got) {
		t.Fatalf("%s: %d lines, want %d", what, len(got), len(want))
	}
}

// detWorkload is a sequence of inserts and deletes over clustered vectors
// with duplicates: exact copies of earlier rows (many land in the same
// wave), a run of 20 identical vectors, deletes, re-adds of deleted ids,
// replacements of live ids, an id given twice in one batch, single Adds,
// and ids in a second chunk.
type detWorkload struct {
	first      []uint32 // the first batch
	deletes    []uint32
	second     []uint32 // the second batch, shuffled
	singles    []uint32
	third      []uint32 // ids beyond the first chunk
	vecs       map[uint32][]float32
	secondVecs [][]float32
}

func newDetWorkload(n, dim int) *detWorkload {
	vecs := clustered(n+n/10+100, dim, 12, 71)
	w := &detWorkload{vecs: map[uint32][]float32{}}
	for i := range n {
		v := vecs[i]
		switch {
		case i%7 == 3:
			v = vecs[i-3]
		case i >= n/2 && i < n/2+20:
			v = vecs[n/2]
		}
		w.vecs[uint32(i)] = v
	}
	cut := n * 6 / 10
	w.first = seqIDs(cut)
	for i := 5; i < cut; i += 13 {
		w.deletes = append(w.deletes, uint32(i))
	}
	r := rand.New(rand.NewPCG(72, 72))
	second := seqIDs(n)[cut:]
	second = append(second, w.deletes[:10]...) // re-added
	for i := range 10 {
		second = append(second, uint32(i*17+1)) // replaced
	}
	r.Shuffle(len(second), func(i, j int) { second[i], second[j] = second[j], second[i] })
	second = slices.Insert(second, len(second)/3, second[len(second)/2]) // given twice
	w.second = second
	for k, id := range second {
		v := w.vecs[id]
		if id < uint32(cut) {
			v = vecs[n+k%(n/10)] // a new vector for a replaced or re-added id
		}
		w.secondVecs = append(w.secondVecs, v)
	}
	w.singles = []uint32{uint32(cut + 1), w.deletes[20], 7}
	for i := range 100 {
		id := uint32(chunkSize + 3*i)
		w.third = append(w.third, id)
		w.vecs[id] = vecs[n+n/10+i]
	}
	return w
}

func (w *detWorkload) vectors(ids []uint32) [][]float32 {
	out := make([][]float32, len(ids))
	for i, id := range ids {
		out[i] = w.vecs[id]
	}
	return out
}

// build runs the workload with the given workers on a fresh graph.
func (w *detWorkload) build(t *testing.T, o Options, workers int) *Graph {
	t.Helper()
	g := newGraph(t, o)
	if err := g.AddBatch(w.first, w.vectors(w.first), workers); err != nil {
		t.Fatal(err)
	}
	for _, id := range w.deletes {
		g.Delete(id)
	}
	if err := g.AddBatch(w.second, w.secondVecs, workers); err != nil {
		t.Fatal(err)
	}
	for _, id := range w.singles {
		if err := g.Add(id, w.vecs[id]); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.AddBatch(w.third, w.vectors(w.third), workers); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestAddBatchDeterministic builds the same sequence of batches, deletes and
// Adds with 1, 2 and 8 workers under all CPUs and with 2 and 8 under
// GOMAXPROCS 1, then once with searches running alongside, and requires
// identical graphs: every node's state, level, lists and reverse index, the
// entry point, the counters and the dirty ids.
func TestAddBatchDeterministic(t *testing.T) {
	n := 3000
	metrics := []Metric{Cosine, L2}
	switch {
	case raceEnabled:
		n, metrics = 800, metrics[:1]
	case testing.Short():
		n, metrics = 1200, metrics[:1]
	}
	for _, metric := range metrics {
		t.Run(metric.String(), func(t *testing.T) {
			w := newDetWorkload(n, 16)
			o := Options{Dim: 16, M: 8, EfConstruction: 48, Metric: metric, Seed: 11}
			var want []string
			procs := runtime.GOMAXPROCS(0)
			defer runtime.GOMAXPROCS(procs)
			for _, c := range []struct{ procs, workers int }{
				{max(runtime.NumCPU(), 2), 1}, {max(runtime.NumCPU(), 2), 2}, {max(runtime.NumCPU(), 2), 8},
				{1, 2}, {1, 8},
			} {
				runtime.GOMAXPROCS(c.procs)
				got := graphDump(w.build(t, o, c.workers))
				if want == nil {
					want = got
					continue
				}
				sameDump(t, fmt.Sprintf("GOMAXPROCS %d, %d workers", c.procs, c.workers), want, got)
			}
			runtime.GOMAXPROCS(procs)

			// Searches read while the batches link; they must not change
			// anything.
			var stop atomic.Bool
			var readers sync.WaitGroup
			g := newGraph(t, o)
			for r := range 2 {
				readers.Go(func() {
					q := w.vecs[uint32(r)]
					dst := make([]Result, 0, 10)
					for !stop.Load() {
						dst = g.Search(dst, q, 10, SearchOptions{})
						runtime.Gosched()
					}
				})
			}
			for _, step := range []func() error{
				func() error { return g.AddBatch(w.first, w.vectors(w.first), 3) },
				func() error {
					for _, id := range w.deletes {
						g.Delete(id)
					}
					return g.AddBatch(w.second, w.secondVecs, 3)
				},
				func() error {
					for _, id := range w.singles {
						if err := g.Add(id, w.vecs[id]); err != nil {
							return err
						}
					}
					return g.AddBatch(w.third, w.vectors(w.third), 3)
				},
			} {
				if err := step(); err != nil {
					t.Fatal(err)
				}
			}
			stop.Store(true)
			readers.Wait()
			sameDump(t, "with concurrent searches", want, graphDump(g))
		})
	}
}

// TestAddBatchWaveSplits: wave boundaries sit at fixed live counts, so a
// sequence inserted as one batch or as one call per wave (Add for waves of
// a single item) builds the same graph; a batch cancelled between waves
// leaves exactly the graph of the batch's inserted prefix.
func TestAddBatchWaveSplits(t *testing.T) {
	n := 3000 // 2,048 and more: waves of 256
	switch {
	case raceEnabled:
		n = 800
	case testing.Short():
		n = 1200
	}
	vecs := clustered(n, 16, 10, 73)
	ids := seqIDs(n)
	o := Options{Dim: 16, M: 8, EfConstruction: 48, Seed: 12}
	whole := newGraph(t, o)
	if err := whole.AddBatch(ids, vecs, 2); err != nil {
		t.Fatal(err)
	}
	want := graphDump(whole)

	split := newGraph(t, o)
	for start := 0; start < n; {
		end := min(n, start+waveLen(split.Len()))
		if end == start+1 {
			if err := split.Add(ids[start], vecs[start]); err != nil {
				t.Fatal(err)
			}
		} else if err := split.AddBatch(ids[start:end], vecs[start:end], 2); err != nil {
			t.Fatal(err)
		}
		start = end
	}
	sameDump(t, "one call per wave", want, graphDump(split))

	// Cancelled after 40 waves.
	ctx := &cancelAfter{Context: context.Background(), n: 40}
	part := newGraph(t, o)
	if err := part.AddBatchContext(ctx, ids, vecs, 2); err != context.Canceled {
		t.Fatalf("AddBatchContext = %v, want context.Canceled", err)
	}
	k := part.Len()
	if k == 0 || k == n {
		t.Fatalf("cancelled batch inserted %d of %d", k, n)
	}
	prefix := newGraph(t, o)
	if err := prefix.AddBatch(ids[:k], vecs[:k], 1); err != nil {
		t.Fatal(err)
	}
	sameDump(t, fmt.Sprintf("cancelled after %d inserts", k), graphDump(prefix), graphDump(part))
	// The level generator is where the prefix left it, too.
	for _, g := range []*Graph{prefix, part} {
		if err := g.AddBatch(ids[k:], vecs[k:], 2); err != nil {
			t.Fatal(err)
		}
	}
	sameDump(t, "the rest after a cancelled batch", graphDump(prefix), graphDump(part))
	// And the structure is that of the uncancelled batch (the ids TakeDirty
	// reports differ: the dumps above took some).
	got := graphDump(part)
	sameDump(t, "the rest after a cancelled batch, against one batch", want[:len(want)-1], got[:len(got)-1])
}

// cancelAfter is a context whose Err turns to Canceled at its n+1-th call.
type cancelAfter struct {
	context.Context
	n, calls int
}

func (c *cancelAfter) Err() error {
	c.calls++
	if c.calls > c.n {
		return context.Canceled
	}
	return nil
}
