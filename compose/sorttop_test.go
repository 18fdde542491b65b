package compose

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortTop: sortTop's first n keys are a full sort's, for sizes around
// n and far past it, with ties on importance broken by hop and edge.
func TestSortTop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 5, 17, 255, 256, 257, 300, 1000, 5000} {
		for _, n := range []int{1, 3, 16, 256} {
			ks := make([]entry, size)
			for i := range ks {
				// Few distinct importances: ties are the common case.
				ks[i] = entry{imp: float64(r.IntN(7)) / 7, entryFlags: entryFlags{hop: uint8(r.IntN(3))}, edge: uint32(i), idx: int32(i)}
			}
			r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
			want := slices.Clone(ks)
			slices.SortFunc(want, compareEntries)
			sortTop(ks, n)
			m := min(n, size)
			if !slices.Equal(ks[:m], want[:m]) {
				t.Fatalf("size %d, n %d: first %d differ", size, n, m)
			}
			rest := slices.Clone(ks[m:])
			slices.SortFunc(rest, compareEntries)
			if !slices.Equal(rest, want[m:]) {
				t.Fatalf("size %d, n %d: the rest is not the other keys", size, n)
			}
		}
	}
}

// TestSortKeys: sortKeys orders as the standard sort does, on shuffled,
// sorted, reversed and organ-pipe inputs (the shapes that make a
// median-of-three quicksort degrade to its fallback).
func TestSortKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{0, 1, 2, 12, 13, 100, 256, 3000} {
		base := make([]entry, size)
		for i := range base {
			base[i] = entry{imp: float64(r.IntN(5)) / 5, entryFlags: entryFlags{hop: uint8(r.IntN(3))}, edge: uint32(i) * 2654435761, idx: int32(i)} // distinct edges: an odd multiplier is a bijection
		}
		want := slices.Clone(base)
		slices.SortFunc(want, compareEntries)
		rev := slices.Clone(want)
		slices.Reverse(rev)
		pipe := append(slices.Clone(want[:size/2]), rev[:size-size/2]...)
		for name, in := range map[string][]entry{"shuffled": base, "sorted": want, "reversed": rev, "organ pipe": pipe} {
			ks := slices.Clone(in) // each a permutation of base: want is its order
			sortKeys(ks)
			if !slices.Equal(ks, want) {
				t.Fatalf("size %d, %s: sortKeys differs from slices.SortFunc", size, name)
			}
		}
	}
}
